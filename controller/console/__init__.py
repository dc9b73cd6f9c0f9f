"""The technician console (SPEC § 1): a line-oriented console on a
serial port (a UART on the Pi, a pty in the simulator and tests), with login by
role and PIN, and commands for status, meters, history, hits, events,
diagnostics, configuration, clearing tilts, software verification and marking a
device out of order (§ 670a.13(n)).

Modules: ``auth`` (roles, scrypt PINs, lock-out), ``lineio`` (channel and line
editor), ``session`` (login and the command loop), ``registry`` (commands,
roles, completion), ``cmd_basic``/``cmd_records``/``cmd_diag``/``cmd_config``
(the commands), ``server`` (pty and socket endpoints), ``relay`` (the UART
bridge run by ``tablectl console``).
"""

from controller.console.server import ConsoleServer

__all__ = ["ConsoleServer"]
