"""The rules engine: pure functions and data for every game in 58 Pa. Code
chapters 670a, 659a, 686a, 687a, 688a and 621a.

Nothing under this package performs I/O (beyond parsing text handed to it) or
imports a hardware library; it is shared by the table, the simulators and the
``analyze`` command."""
