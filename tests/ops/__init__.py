"""Operations without surprises (tests/ops/)."""

#: what controller/cli.py says for an exception no command foresaw (kept literal: the tests also run
#: against code from before it existed, to show they fail there)
FAULT = "this is a fault in tablectl"
