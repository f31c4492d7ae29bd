"""The `wiki` module: registered so its agent has a status row; no command types yet."""
from __future__ import annotations

from .base import Module

MODULE = Module(name='wiki')
