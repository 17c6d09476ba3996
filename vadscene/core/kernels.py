"""Compiled kernels: numba compiles a function on its first call, not when its module loads.

Every numba kernel of vadscene is declared with :func:`compiled`. Importing numba is among the
costliest imports of a run (it loads llvmlite, and its array support loads scipy.linalg), so
a process that never calls a kernel — ``vadscene --help``, a release, a ground-truth check, an
app page — should not pay for it. A :class:`Kernel` imports numba and compiles (or loads from
the on-disk cache) the first time it is called; afterwards a call goes straight to numba's
dispatcher.

Options are numba's ``njit`` options. Every kernel is cached on disk (``cache=True``: a new
process loads the machine code instead of compiling it; numba falls back to a per-user cache
folder when the package folder is read-only) and releases the GIL (``nogil=True``: threads run
kernels in parallel); a kernel may add options but not drop these two.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["Kernel", "compiled"]

_Function = TypeVar("_Function", bound=Callable[..., Any])

DEFAULT_OPTIONS: dict[str, Any] = {"cache": True, "nogil": True}
"""The ``njit`` options every kernel has."""

_compiling = threading.RLock()
"""Held while a kernel (and the kernels it calls) is handed to numba: threads that call a
kernel for the first time at once compile it once. Re-entrant: compiling a kernel first
compiles those it calls."""


def compiled(**options: Any) -> Callable[[_Function], _Function]:
    """Declare a numba kernel: ``@compiled()`` or ``@compiled(fastmath=True)``.

    The function is compiled by ``numba.njit(cache=True, nogil=True, **options)`` on its first
    call. ``cache`` and ``nogil`` cannot be turned off (see the module docstring).
    """
    forced = {key: options[key] for key in DEFAULT_OPTIONS if options.get(key, True) is not True}
    if forced:
        raise ValueError(f"a kernel is always compiled with cache=True, nogil=True; got {forced}")

    def declare(function: _Function) -> _Function:
        return cast(_Function, Kernel(function, {**DEFAULT_OPTIONS, **options}))

    return declare


class Kernel:
    """A Python function that numba compiles on its first call (:func:`compiled`).

    Calling it calls the compiled code; any other attribute (``stats``, ``signatures``,
    ``py_func``…) is the numba dispatcher's, which compiles it first.
    """

    def __init__(self, function: Callable[..., Any], options: dict[str, Any]) -> None:
        self.python = function
        """The function as written."""
        self.options = options
        """The ``njit`` options it is compiled with."""
        self._dispatcher: Any = None
        functools.update_wrapper(self, function)

    @property
    def dispatcher(self) -> Any:
        """numba's dispatcher of the function: numba imported and the function compiled (or
        loaded from the cache) the first time it is asked for."""
        if self._dispatcher is None:
            with _compiling:
                if self._dispatcher is None:
                    self._dispatcher = self._compile()
        return self._dispatcher

    def _compile(self) -> Any:
        from numba import njit

        # numba resolves the functions a kernel calls from its module's globals when it types
        # the kernel, and it can only call its own dispatchers: a kernel this one calls by name
        # is compiled first and put in its place there (the module attribute then names the
        # dispatcher; the Kernel object, wherever else it is held, forwards to the same one).
        namespace = self.python.__globals__
        for name in self.python.__code__.co_names:
            callee = namespace.get(name)
            if isinstance(callee, Kernel):
                namespace[name] = callee.dispatcher
        return njit(**self.options)(self.python)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.dispatcher(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # only reached for names a Kernel does not have itself
        if name.startswith("__") or name == "_dispatcher":
            raise AttributeError(name)
        return getattr(self.dispatcher, name)

    def __repr__(self) -> str:
        state = "compiled" if self._dispatcher is not None else "not compiled yet"
        return f"<kernel {self.__module__}.{self.__qualname__} ({state})>"
