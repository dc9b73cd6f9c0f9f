"""What every layer shares: the ledger records' vocabulary, money in words, bounded and private
files, did-you-mean, JSON lines, the game clock, the reactor, the log context."""
