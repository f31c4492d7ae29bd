"""The `wiki` module: registered so its agent has a status row; no command types yet."""
from __future__ import annotations

from . import Module, register

MODULE = register(Module(name='wiki'))
