"""Sub-commands of the ``tablectl`` CLI, one module each.

Every module defines ``NAME`` (the sub-command), ``HELP`` (one line),
``add_arguments(parser)`` and ``run(args) -> int`` (the exit status).  Modules
keep their imports light at module level (heavy imports inside ``run``) so that
``tablectl`` starts fast whatever the command.  :mod:`controller.cli` finds them
with :mod:`pkgutil`; adding a command needs no edit anywhere else.
"""
