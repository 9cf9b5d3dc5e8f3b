"""Exceptions the library raises for problems that are not findings in data.

The CLI maps them to exit codes: UsageError -> 2, ConfigError -> 3.
"""


class MlreproError(Exception):
    """Base class."""


class UsageError(MlreproError):
    """The call itself is wrong (bad combination of options, bad path kind)."""


class ConfigError(MlreproError):
    """The project's configuration or environment is broken (schemas, params)."""
