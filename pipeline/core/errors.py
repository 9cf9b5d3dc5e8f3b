"""Exceptions the library raises for problems that are not findings in data.

The CLI maps them to exit codes: DataError -> 1, UsageError -> 2, ConfigError -> 3.
"""


class MlreproError(Exception):
    """Base class."""


class UsageError(MlreproError):
    """The call itself is wrong (bad combination of options, bad path kind)."""


class ConfigError(MlreproError):
    """The project's configuration or environment is broken (schemas, params)."""


class DataError(MlreproError):
    """An input the command needs whole cannot be used (an unreadable or empty
    table): data failing a check (exit 1), carried as a located finding."""

    def __init__(self, message: str, found):
        super().__init__(message)
        self.finding = found
