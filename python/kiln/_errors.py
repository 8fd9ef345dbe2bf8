"""kiln's exceptions: one class per kiln_status family.

Each carries ``status`` (the kiln_status number), ``status_name``
("KILN_ERROR_BUILD"), ``message`` (kiln_last_error_message(): which call,
which argument, the driver's code) and ``build_log`` (the compiler's whole
log for build failures, "" otherwise). Each also derives from the built-in
exception a Python programmer would catch for that mistake (ValueError,
IndexError, MemoryError, ...).
"""


class KilnError(Exception):
    """Base class of every error kiln's C library reports."""

    def __init__(self, message="", status=0, status_name="", build_log="", native=0):
        super().__init__(message)
        self.message = message
        self.status = status
        self.status_name = status_name
        self.build_log = build_log
        self.native = native

    def __str__(self):
        s = f"{self.status_name}: {self.message}" if self.status_name else self.message
        if self.build_log:
            s += "\n--- build log ---\n" + self.build_log
        return s


class InvalidArgumentError(KilnError, ValueError):
    """KILN_ERROR_INVALID_ARGUMENT, KILN_ERROR_NULL_HANDLE."""


class OutOfMemoryError(KilnError, MemoryError):
    """KILN_ERROR_OUT_OF_HOST_MEMORY, KILN_ERROR_OUT_OF_DEVICE_MEMORY."""


class RuntimeNotFoundError(KilnError, RuntimeError):
    """KILN_ERROR_NO_RUNTIME: no OpenCL ICD loader or libcuda could be loaded."""


class NoDeviceError(KilnError, LookupError):
    """KILN_ERROR_NO_DEVICE: no device matches the selector."""


class BuildError(KilnError, RuntimeError):
    """KILN_ERROR_BUILD: a program or generated kernel failed to compile;
    ``build_log`` holds the compiler's log."""


class KernelNotFoundError(KilnError, LookupError):
    """KILN_ERROR_KERNEL_NOT_FOUND."""


class KernelArgsError(KilnError, TypeError):
    """KILN_ERROR_KERNEL_ARGS: arguments do not match the kernel's parameters."""


class OutOfRangeError(KilnError, IndexError):
    """KILN_ERROR_OUT_OF_RANGE."""


class DriverError(KilnError, RuntimeError):
    """KILN_ERROR_DRIVER: the driver's own error (``native`` has its code)."""


class UnsupportedError(KilnError, NotImplementedError):
    """KILN_ERROR_UNSUPPORTED: this device, backend or version cannot do it."""


class KilnIOError(KilnError, OSError):
    """KILN_ERROR_IO."""


class EventFailedError(KilnError, RuntimeError):
    """KILN_ERROR_EVENT_FAILED: a command this depended on failed."""


class WrongStateError(KilnError, RuntimeError):
    """KILN_ERROR_WRONG_STATE."""


class MismatchError(KilnError, ValueError):
    """KILN_ERROR_MISMATCH: shapes, dtypes or contexts that do not fit."""


class InternalError(KilnError, RuntimeError):
    """KILN_ERROR_INTERNAL (please report it)."""


class UntrustedError(KilnError, PermissionError):
    """KILN_ERROR_UNTRUSTED: a cache file or directory others could write."""


class KilnTimeoutError(KilnError, TimeoutError):
    """KILN_ERROR_TIMEOUT."""


class CanceledError(KilnError, RuntimeError):
    """KILN_ERROR_CANCELED."""


_BY_NAME = {
    "KILN_ERROR_INVALID_ARGUMENT": InvalidArgumentError,
    "KILN_ERROR_NULL_HANDLE": InvalidArgumentError,
    "KILN_ERROR_OUT_OF_HOST_MEMORY": OutOfMemoryError,
    "KILN_ERROR_OUT_OF_DEVICE_MEMORY": OutOfMemoryError,
    "KILN_ERROR_NO_RUNTIME": RuntimeNotFoundError,
    "KILN_ERROR_NO_DEVICE": NoDeviceError,
    "KILN_ERROR_BUILD": BuildError,
    "KILN_ERROR_KERNEL_NOT_FOUND": KernelNotFoundError,
    "KILN_ERROR_KERNEL_ARGS": KernelArgsError,
    "KILN_ERROR_OUT_OF_RANGE": OutOfRangeError,
    "KILN_ERROR_DRIVER": DriverError,
    "KILN_ERROR_UNSUPPORTED": UnsupportedError,
    "KILN_ERROR_IO": KilnIOError,
    "KILN_ERROR_EVENT_FAILED": EventFailedError,
    "KILN_ERROR_WRONG_STATE": WrongStateError,
    "KILN_ERROR_MISMATCH": MismatchError,
    "KILN_ERROR_INTERNAL": InternalError,
    "KILN_ERROR_UNTRUSTED": UntrustedError,
    "KILN_ERROR_TIMEOUT": KilnTimeoutError,
    "KILN_ERROR_CANCELED": CanceledError,
}


def _make_error(status, name, message, build_log, status_string, native):
    """Called by the extension for a failing kiln call."""
    cls = _BY_NAME.get(name, KilnError)
    return cls(message or status_string, status, name, build_log, native)


def error_class(status_name):
    """The exception class of a kiln status name ("KILN_ERROR_BUILD")."""
    return _BY_NAME.get(status_name, KilnError)
