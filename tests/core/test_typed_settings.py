"""Typed provider settings: declared once (`kit.Settings`), validated by core once, handed
to the provider as ``self.settings`` before ``is_available``/``initialize``."""

from __future__ import annotations

import dataclasses
import logging
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hermes_memory_core import MemoryManager, MemoryProvider, hookimpl, kit
from hermes_memory_core.plugins import PluginRegistry


@dataclass(frozen=True)
class NotesSettings(kit.Settings):
    section = "notes"
    url: str = kit.setting("", "Base URL.", env="T_NOTES_URL")
    api_key: str = kit.setting("", "Token.", env="T_NOTES_KEY", secret=True)
    timeout: float = kit.setting(5.0, "Seconds per request.", minimum=0.1)
    retries: int = kit.setting(1, "Extra attempts.", env="T_NOTES_RETRIES", minimum=0)
    mode: str = kit.setting("fast", "fast or slow.", choices=("fast", "slow"))
    verbose: bool = kit.setting(False, "Log more.")
    label: str | None = kit.setting(None, "Optional label.")
    extra: dict[str, Any] = kit.setting({"a": 1}, "Free-form options.")  # noqa: RUF009

    def check(self) -> None:
        if self.url and not self.url.startswith(("http://", "https://")):
            raise kit.SettingsError(f"notes.url must be an http(s) URL, got {self.url!r}")

    def missing(self) -> str:
        return "" if self.url else "set T_NOTES_URL (or notes.url)"


class TypedProvider(MemoryProvider):
    """A provider that trusts its settings: it reports available whatever they are."""

    name = "typed"
    settings_class = NotesSettings
    settings: NotesSettings
    seen: NotesSettings | None = None

    def is_available(self) -> bool:
        self.seen = self.settings  # handed over before is_available
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []


class PlainProvider(MemoryProvider):
    """A third-party provider written before typed settings: declares nothing."""

    name = "plain"

    def __init__(self, *, config: dict[str, Any] | None = None) -> None:
        self.config = config

    def configure(self) -> None:  # its own method of that name, never called by core
        raise AssertionError("core called a provider's own configure()")

    def is_available(self) -> bool:
        return True

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        pass

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []


def registry_with(*classes: type[MemoryProvider]) -> PluginRegistry:
    registry = PluginRegistry()

    @hookimpl
    def register_memory_providers(register: Any) -> None:
        for cls in classes:
            register(cls, name=str(cls.name))

    plugin = types.ModuleType("typed_settings_plugin")
    plugin.register_memory_providers = register_memory_providers  # type: ignore[attr-defined]
    registry.register_plugin(plugin, name="test-typed")
    return registry


# ----------------------------------------------------------------------------- the class
def test_declaration_gives_types_schema_and_defaults() -> None:
    fields = {f.key: f for f in NotesSettings.fields()}
    assert list(fields) == ["url", "api_key", "timeout", "retries", "mode", "verbose", "label",
                            "extra"]  # fmt: skip
    assert (fields["timeout"].type, fields["label"].type, fields["extra"].type) == (
        float,
        str,
        dict,
    )
    schema = {entry["key"]: entry for entry in NotesSettings.schema()}
    assert schema["api_key"]["secret"] is True and schema["api_key"]["env_var"] == "T_NOTES_KEY"
    assert schema["mode"]["choices"] == ["fast", "slow"]
    assert schema["timeout"] == {"key": "timeout", "description": "Seconds per request.",
                                 "type": "number", "secret": False, "required": False,
                                 "default": 5.0, "minimum": 0.1}  # fmt: skip
    defaults = NotesSettings.defaults()
    assert (defaults.timeout, defaults.label, defaults.extra) == (5.0, None, {"a": 1})
    assert defaults.extra is not NotesSettings.defaults().extra  # a fresh dict each time


def test_precedence_file_then_environment_then_default() -> None:
    env = {"T_NOTES_URL": "http://env.example", "T_NOTES_RETRIES": "4"}
    s = NotesSettings.from_config({"notes": {"url": "https://file.example"}}, environ=env)
    assert (s.url, s.retries, s.timeout) == ("https://file.example", 4, 5.0)
    assert s.explicit == frozenset({"url", "retries"})
    assert NotesSettings.from_config({}, environ=env).url == "http://env.example"
    blank = NotesSettings.from_config(None, environ={"T_NOTES_URL": "  "})
    assert blank.url == "" and blank.missing()


def test_settings_are_immutable_and_secrets_stay_out_of_repr() -> None:
    s = NotesSettings.load({"api_key": "sk-very-secret", "url": "https://x"}, environ={})
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.url = "http://elsewhere"  # type: ignore[misc]
    assert "sk-very-secret" not in repr(s) and "https://x" in repr(s)


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"timeout": "soon"}, "notes.timeout must be a number, got 'soon'"),
        ({"retries": -1}, "notes.retries must be at least 0, got -1"),
        ({"verbose": "maybe"}, "notes.verbose must be true or false, got 'maybe'"),
        ({"mode": "ｆast"}, "notes.mode must be one of fast, slow"),  # fullwidth look-alike
        ({"mode": "fast\u200b"}, "notes.mode must be one of fast, slow"),  # invisible char
        ({"url": "file:///etc/passwd"}, "notes.url must be an http(s) URL"),  # check()
        ({"extra": [1, 2]}, "notes.extra must be a mapping, got list"),
    ],
)
def test_bad_values_name_the_key(section: dict[str, Any], message: str) -> None:
    with pytest.raises(kit.SettingsError, match=r"^notes\.") as caught:
        NotesSettings.load(section, environ={})
    assert message in str(caught.value)


@pytest.mark.parametrize("value", [["sk-live-123"], {"k": "sk-live-123"}, True])
def test_a_mistyped_secret_is_never_echoed(value: object) -> None:
    with pytest.raises(kit.SettingsError) as caught:
        NotesSettings.load({"api_key": value}, environ={})
    message = str(caught.value)
    assert message.startswith("notes.api_key must be a string, got a ")
    assert "sk-live" not in message and "True" not in message
    _, error = kit.resolve_settings(NotesSettings, {"notes": {"api_key": value}}, environ={})
    assert "sk-live" not in error


def test_cjk_values_survive() -> None:
    s = NotesSettings.load({"url": "https://例え.jp/ノート", "label": "记忆"}, environ={})
    assert (s.url, s.label) == ("https://例え.jp/ノート", "记忆")


def test_resolve_settings_never_raises_and_has_one_wording(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings, error = kit.resolve_settings(NotesSettings, {"notes": ["not", "a", "mapping"]})
    assert error == "configuration error: notes must be a mapping of settings, got list"
    assert settings == NotesSettings.defaults()
    _, error = kit.resolve_settings(NotesSettings, {"notes": {"timeout": "soon"}}, environ={})
    assert error == "configuration error: notes.timeout must be a number, got 'soon'"
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            kit.resolve_settings(NotesSettings, {"notes": {"tiemout": 3, "url": "http://x"}})
    assert [r.getMessage() for r in caplog.records].count(
        "config.yaml: unknown key notes.tiemout is ignored"
    ) == 1
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        kit.resolve_settings(NotesSettings, {"notes": {"x\nERROR forged line": 1}})
    assert "\n" not in caplog.text.strip() and "'x\\nERROR forged line'" in caplog.text


def test_an_unsupported_annotation_is_refused_when_declared() -> None:
    @dataclass(frozen=True)
    class Odd(kit.Settings):
        section = "odd"
        ports: tuple[int, ...] = kit.setting((), "Not a supported type.")

    with pytest.raises(TypeError, match=r"Odd\.ports: a setting is str, int, float, bool"):
        Odd.fields()


# ----------------------------------------------------------------------------- core
def test_core_hands_settings_over_before_is_available(tmp_path: Path) -> None:
    registry = registry_with(TypedProvider)
    config = {"notes": {"url": "https://notes.example", "timeout": 2}}
    provider = registry.create("typed", hermes_home=tmp_path, config=config)
    assert isinstance(provider, TypedProvider)
    assert provider.settings.url == "https://notes.example"
    assert provider.is_available() and provider.seen is provider.settings
    assert provider.settings_error == ""
    assert provider.get_config_schema() == NotesSettings.schema()


def test_invalid_settings_make_the_provider_unavailable_with_one_reason(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    registry = registry_with(TypedProvider)
    info = registry.describe(hermes_home=tmp_path, config={"notes": {"timeout": "soon"}})
    assert [(i.name, i.available, i.unavailable_reason, i.load_error) for i in info] == [
        ("typed", False, "configuration error: notes.timeout must be a number, got 'soon'", None)
    ]
    (tmp_path / "config.yaml").write_text(
        "memory:\n  provider: typed\nnotes:\n  timeout: soon\n", encoding="utf-8"
    )
    with (
        caplog.at_level(logging.WARNING),
        MemoryManager.from_config(tmp_path, registry=registry) as manager,
    ):
        assert manager.get_provider("typed") is None  # is_available said yes: core said no
    assert "configuration error: notes.timeout must be a number" in caplog.text
    assert "Traceback" not in caplog.text


def test_from_config_uses_the_one_parse_of_config_yaml(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "memory:\n  provider: typed\nnotes:\n  url: https://京都.example\n", encoding="utf-8"
    )
    with MemoryManager.from_config(tmp_path, registry=registry_with(TypedProvider)) as manager:
        provider = manager.get_provider("typed")
        assert isinstance(provider, TypedProvider)
        assert provider.settings.url == "https://京都.example"


def test_a_provider_built_directly_validates_lazily() -> None:
    provider = TypedProvider()
    assert provider.settings == NotesSettings.defaults()  # no config.yaml: defaults + env
    provider.configure({"notes": {"retries": "x"}}, environ={})
    assert (
        provider.settings_error == "configuration error: notes.retries must be an integer, got 'x'"
    )
    assert provider.unavailable_reason() == provider.settings_error


def test_providers_that_declare_nothing_keep_working(tmp_path: Path) -> None:
    registry = registry_with(PlainProvider)
    provider = registry.create("plain", hermes_home=tmp_path, config={"plain": {"k": 1}})
    assert isinstance(provider, PlainProvider) and provider.config == {"plain": {"k": 1}}
    assert provider.settings_error == "" and provider.get_config_schema() == []
    assert provider.unavailable_reason() == ""
    with pytest.raises(AttributeError, match="declares no settings_class"):
        _ = provider.settings
    with pytest.raises(AttributeError):  # read-only: the 0.2 pre-release setter is gone
        provider.settings = {"own": True}  # type: ignore[misc]
    [info] = registry.describe(hermes_home=tmp_path, config={"plain": "anything"})
    assert info.available and info.load_error is None


@dataclass(frozen=True)
class ServiceSettings(kit.RemoteSettings):
    section = "service"
    env_prefix = "T_SERVICE_"
    mode: str = kit.setting("cloud", "cloud or local.", choices=("cloud", "local"))

    @classmethod
    def adjust(cls, key: str, value: Any) -> Any:
        return "local" if key == "mode" and value in ("self-hosted", "on-prem") else value


class ServiceProvider(kit.RemoteProvider):
    name = "service"
    settings_class = ServiceSettings
    settings: ServiceSettings

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        self._begin(kwargs)

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return []


def test_env_prefix_and_adjust_reach_file_and_environment_values() -> None:
    env = {"T_SERVICE_MODE": "on-prem", "T_SERVICE_RETRIES": "4"}
    s = ServiceSettings.from_config({}, environ=env)
    assert (s.mode, s.retries) == ("local", 4)
    assert ServiceSettings.from_config({"service": {"mode": "self-hosted"}}).mode == "local"
    schema = {e["key"]: e for e in ServiceSettings.schema()}
    assert schema["breaker_cooldown"]["env_var"] == "T_SERVICE_BREAKER_COOLDOWN"
    with pytest.raises(kit.SettingsError, match=r"service\.mode must be one of cloud, local"):
        ServiceSettings.load({"mode": "elsewhere"}, environ={})


def test_the_guard_takes_its_knobs_from_remote_settings(tmp_path: Path) -> None:
    section = {"retries": 2, "breaker_threshold": 7, "breaker_cooldown": 9.5}
    provider = ServiceProvider(hermes_home=tmp_path, config={"service": section}, environ={})
    assert provider.is_available()
    guard = provider._make_guard(kit.classify_common, label="service", logger=logging.getLogger())  # type: ignore[arg-type]
    assert (guard.retries, guard.breaker.threshold, guard.breaker.cooldown) == (2, 7, 9.5)
    bad = ServiceProvider(hermes_home=tmp_path, config={"service": {"retries": "x"}}, environ={})
    assert (
        bad.unavailable_reason()
        == "configuration error: service.retries must be an integer, got 'x'"
    )
    assert bad._make_guard(kit.classify_common, label="s", logger=logging.getLogger()).retries == 1  # type: ignore[arg-type]
