"""The project's one exception tree. Every external dependency's errors are mapped to these at the
boundary (``raise X(...) from exc``) so that the command line can print one sentence and exit with the
code of docs/architecture.md.

    AgentXError                      message + hint; exit_code
    ├── UsageError                   exit 2: bad flag, bad value, bad --check expression
    │   └── WorkloadError            exit 2: a workload file or preset that cannot be used
    ├── TargetError                  exit 3: the target could not be reached or started
    │   ├── NotVllmError             a server answered, but it is not an OpenAI-compatible vLLM
    │   ├── LaunchError              `vllm serve` failed or exited during start-up
    │   └── VllmNotFoundError        no way to run vLLM was found
    └── RecordingError               exit 2: a file that is not an agentx-tui recording
"""

from __future__ import annotations


class AgentXError(Exception):
    """Base of every error agentx-tui reports to a user."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} {self.hint}"


class UsageError(AgentXError):
    exit_code = 2


class WorkloadError(UsageError):
    pass


class TargetError(AgentXError):
    exit_code = 3


class NotVllmError(TargetError):
    pass


class LaunchError(TargetError):
    def __init__(self, message: str, hint: str | None = None, log_tail: list[str] | None = None) -> None:
        super().__init__(message, hint)
        self.log_tail = log_tail or []


class VllmNotFoundError(TargetError):
    pass


class RecordingError(AgentXError):
    exit_code = 2


EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_TARGET = 3
