"""The OpenAI code interpreter codec: wire fields, result parsing and malformed replies."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import cast

import pytest

from weakincentives.adapters._hosted import HostedOutputParseError
from weakincentives.adapters.openai._codecs import OpenAICodeInterpreterCodec
from weakincentives.errors import ConfigValidationError
from weakincentives.serde import JSONValue
from weakincentives.tools import (
    CodeExecution,
    CodeInterpreterConfig,
    CodeInterpreterResult,
    ContainerFile,
    code_interpreter_tool,
)

FIXTURES = Path(__file__).parent.parent.parent / "fixtures" / "hosted_tools"
CONTAINER = "cntr_68f2b4d3c2ac8190b5e2f1a0d9c8b7a6"
IMAGE_URL = (
    "https://api.openai.com/v1/containers/cntr_68f2b4d3c2ac8190b5e2f1a0d9c8b7a6/files/"
    "cfile_68f2b4dc1e7c8190a2b3c4d5e6f7a8b9/content"
)
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "<stdin>", line 1, in <module>\n'
    "IndexError: list index out of range"
)

type Item = dict[str, JSONValue]


def load_output(name: str) -> list[Item]:
    """The ``output`` array of a recorded Responses API reply."""
    response = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return cast(list[Item], response["output"])


def obj(value: JSONValue) -> dict[str, JSONValue]:
    """Narrow a fixture value known to be an object."""
    assert isinstance(value, dict)
    return value


def arr(value: JSONValue) -> list[JSONValue]:
    """Narrow a fixture value known to be an array."""
    assert isinstance(value, list)
    return value


def serialize(config: CodeInterpreterConfig) -> dict[str, JSONValue]:
    return OpenAICodeInterpreterCodec().serialize(code_interpreter_tool(config))


def parse(items: list[Item]) -> CodeInterpreterResult | None:
    return OpenAICodeInterpreterCodec().parse_output(items, code_interpreter_tool())


class TestSerialize:
    def test_kind_is_code_interpreter(self) -> None:
        """The codec registers under the provider-neutral kind."""
        assert OpenAICodeInterpreterCodec().kind == "code_interpreter"

    def test_default_config_asks_for_auto_container(self) -> None:
        """Without options a fresh container with provider defaults is requested."""
        assert serialize(CodeInterpreterConfig()) == {
            "type": "code_interpreter",
            "container": {"type": "auto"},
        }

    def test_fresh_container_options_are_sent(self) -> None:
        """Files, memory and a network allowlist map to the auto container's fields."""
        config = CodeInterpreterConfig(
            file_ids=("file-a", "file-b"), memory_limit_gb=16, network_domains=("pypi.org",)
        )
        assert serialize(config) == {
            "type": "code_interpreter",
            "container": {
                "type": "auto",
                "file_ids": ["file-a", "file-b"],
                "memory_limit": "16g",
                "network_policy": {"type": "allowlist", "allowed_domains": ["pypi.org"]},
            },
        }

    def test_empty_network_domains_disable_network(self) -> None:
        """An empty allowlist means no outbound network at all."""
        spec = serialize(CodeInterpreterConfig(network_domains=()))
        assert spec["container"] == {"type": "auto", "network_policy": {"type": "disabled"}}

    def test_existing_container_is_sent_by_id(self) -> None:
        """A container id replaces the auto container object."""
        spec = serialize(CodeInterpreterConfig(container_id=CONTAINER))
        assert spec == {"type": "code_interpreter", "container": CONTAINER}

    @pytest.mark.parametrize("memory", [1, 4, 16, 64])
    def test_offered_memory_sizes_are_accepted(self, memory: int) -> None:
        """Each size OpenAI offers maps to its '<n>g' spelling."""
        spec = serialize(CodeInterpreterConfig(memory_limit_gb=memory))
        assert spec["container"] == {"type": "auto", "memory_limit": f"{memory}g"}

    @pytest.mark.parametrize(
        ("config", "field_name", "message"),
        [
            (
                CodeInterpreterConfig(allowed_languages=("python", "javascript", "r")),
                "allowed_languages",
                "OpenAI's code interpreter runs only Python, but allowed_languages asks for "
                "'javascript', 'r'; use allowed_languages=('python',)",
            ),
            (
                CodeInterpreterConfig(allowed_languages=("julia",)),
                "allowed_languages",
                "OpenAI's code interpreter runs only Python, but allowed_languages asks for "
                "'julia'; use allowed_languages=('python',)",
            ),
            (
                CodeInterpreterConfig(timeout_seconds=30),
                "timeout_seconds",
                "OpenAI's code interpreter has no time limit option; leave "
                "CodeInterpreterConfig.timeout_seconds as None",
            ),
            (
                CodeInterpreterConfig(memory_limit_gb=8),
                "memory_limit_gb",
                "OpenAI code interpreter containers offer 1, 4, 16 or 64 GB of memory, "
                "not memory_limit_gb=8",
            ),
            (
                CodeInterpreterConfig(file_ids=tuple(f"file-{index}" for index in range(51))),
                "file_ids",
                "OpenAI's code interpreter takes at most 50 file_ids per container, got 51; "
                "upload fewer files or merge them",
            ),
        ],
    )
    def test_unsupported_option_is_refused(
        self, config: CodeInterpreterConfig, field_name: str, message: str
    ) -> None:
        """Options OpenAI cannot honour raise instead of being dropped."""
        with pytest.raises(ConfigValidationError) as caught:
            serialize(config)
        assert caught.value.message == message
        assert (caught.value.config_type, caught.value.field_name) == (
            CodeInterpreterConfig,
            field_name,
        )

    def test_fifty_file_ids_are_sent(self) -> None:
        """The API's limit itself is fine: all fifty files go into the auto container."""
        file_ids = tuple(f"file-{index}" for index in range(50))
        spec = serialize(CodeInterpreterConfig(file_ids=file_ids))
        assert spec["container"] == {"type": "auto", "file_ids": list(file_ids)}

    def test_every_unsupported_option_is_reported(self) -> None:
        """Several unsupported options produce one error naming each."""
        config = CodeInterpreterConfig(allowed_languages=("r",), timeout_seconds=5)
        with pytest.raises(ConfigValidationError, match=r"^2 problems in CodeInterpreterConfig:\n"):
            serialize(config)


class TestParse:
    def test_runs_logs_images_and_files_are_parsed(self) -> None:
        """Every run is kept in order and the flat fields summarise them."""
        items = load_output("code_interpreter_with_logs")
        codes = [obj(item)["code"] for item in items[:3]]
        assert all(isinstance(code, str) for code in codes)
        first, failing, plotting = cast(list[str], codes)
        assert parse(items) == CodeInterpreterResult(
            code=f"{first}\n\n{failing}\n\n{plotting}",
            stdout=f"mean=13.70\nstdev=1.108\n{TRACEBACK}\nsaved\n",
            stderr="",
            exit_code=None,
            executions=(
                CodeExecution(
                    call_id="ci_68f2b4d4a1f88190a9b8c7d6e5f4a3b2",
                    status="completed",
                    code=first,
                    logs="mean=13.70\nstdev=1.108\n",
                    container_id=CONTAINER,
                ),
                CodeExecution(
                    call_id="ci_68f2b4d7b3e48190c0d9e8f7a6b5c4d3",
                    status="failed",
                    code=failing,
                    logs=TRACEBACK,
                    container_id=CONTAINER,
                ),
                CodeExecution(
                    call_id="ci_68f2b4da0c1c8190d1e0f9a8b7c6d5e4",
                    status="completed",
                    code=plotting,
                    logs="saved\n",
                    image_urls=(IMAGE_URL,),
                    container_id=CONTAINER,
                ),
            ),
            files=(
                ContainerFile(
                    file_id="cfile_68f2b4dc1e7c8190a2b3c4d5e6f7a8b9",
                    filename="trend.png",
                    container_id=CONTAINER,
                ),
            ),
        )

    def test_one_failed_run_makes_status_partial(self) -> None:
        """A failure among successes is surfaced in the summary status."""
        result = parse(load_output("code_interpreter_with_logs"))
        assert result is not None
        assert result.status == "partial"

    @pytest.mark.parametrize("fixture", ["no_hosted_call", "web_search_with_citations"])
    def test_response_without_run_yields_none(self, fixture: str) -> None:
        """No code_interpreter_call item means the tool was not used."""
        assert parse(load_output(fixture)) is None

    def test_run_without_code_or_outputs_is_kept(self) -> None:
        """Null code and outputs (outputs not included in the request) read as empty."""
        items: list[Item] = [
            {
                "id": "ci_1",
                "type": "code_interpreter_call",
                "status": "interpreting",
                "code": None,
                "container_id": CONTAINER,
                "outputs": None,
            },
        ]
        assert parse(items) == CodeInterpreterResult(
            code="",
            executions=(
                CodeExecution(
                    call_id="ci_1", status="interpreting", code="", container_id=CONTAINER
                ),
            ),
        )

    def test_unknown_outputs_and_repeated_files_are_handled(self) -> None:
        """Unknown output types are skipped and a file cited twice is listed once."""
        citation: JSONValue = {
            "type": "container_file_citation",
            "container_id": CONTAINER,
            "file_id": "cfile_1",
            "filename": "a.csv",
            "start_index": 0,
            "end_index": 1,
        }
        items: list[Item] = [
            {
                "id": "ci_1",
                "type": "code_interpreter_call",
                "status": "completed",
                "code": "1",
                "outputs": [{"type": "video", "url": "x"}, {"type": "logs", "logs": "no newline"}],
            },
            {
                "id": "ci_2",
                "type": "code_interpreter_call",
                "status": "completed",
                "code": "2",
                "outputs": [{"type": "logs", "logs": "second"}],
            },
            {
                "type": "message",
                "content": [
                    {"type": "output_text", "text": "a", "annotations": [citation, citation]},
                ],
            },
        ]
        result = parse(items)
        assert result is not None
        assert (result.stdout, result.code) == ("no newline\nsecond", "1\n\n2")
        assert result.files == (
            ContainerFile(file_id="cfile_1", filename="a.csv", container_id=CONTAINER),
        )


def _mutated(mutate: str) -> list[Item]:
    items = copy.deepcopy(load_output("code_interpreter_with_logs"))
    run = items[2]
    outputs = arr(run["outputs"])
    citation = obj(arr(obj(arr(items[3]["content"])[0])["annotations"])[0])
    match mutate:
        case "outputs_not_list":
            run["outputs"] = "saved"
        case "output_not_object":
            outputs[0] = "saved"
        case "logs_not_string":
            obj(outputs[0])["logs"] = ["saved"]
        case "image_url_missing":
            del obj(outputs[1])["url"]
        case "code_not_string":
            run["code"] = 42
        case "status_missing":
            del run["status"]
        case "file_id_missing":
            del citation["file_id"]
    return items


@pytest.mark.parametrize(
    ("mutate", "path", "expected", "got"),
    [
        ("outputs_not_list", "$.output[2].outputs", "an array or null", "string 'saved'"),
        ("output_not_object", "$.output[2].outputs[0]", "an object", "string 'saved'"),
        ("logs_not_string", "$.output[2].outputs[0].logs", "a string", "array"),
        (
            "image_url_missing",
            "$.output[2].outputs[1].url",
            "a string",
            "nothing (the key is missing)",
        ),
        ("code_not_string", "$.output[2].code", "a string or null", "number 42"),
        ("status_missing", "$.output[2].status", "a string", "nothing (the key is missing)"),
        (
            "file_id_missing",
            "$.output[3].content[0].annotations[0].file_id",
            "a string",
            "nothing (the key is missing)",
        ),
    ],
)
def test_malformed_reply_raises_parse_error_with_path(
    mutate: str, path: str, expected: str, got: str
) -> None:
    """A wrong shape stops parsing with the JSON path, expectation and offending item."""
    items = _mutated(mutate)
    with pytest.raises(HostedOutputParseError) as caught:
        parse(items)
    error = caught.value
    assert error.message == (
        f"expected {expected}, got {got} at {path} while parsing CodeInterpreterResult"
    )
    assert (error.path, error.kind) == (path, "code_interpreter")
    assert error.item is items[int(path[len("$.output[")])]
