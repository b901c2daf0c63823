"""docker-compose.yml works as deploy/README.md says: checked without a Docker engine.

Each test reads the file as compose resolves it (variables unset, so the documented local
defaults apply) and checks one promise: pinned images, files that exist, loopback ports, Neo4j
auth from the environment, Redis AOF, the service configured for the compose network with the
user's project mounted, and Prometheus and Grafana pointed at the right places.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from memory_service.settings import Settings
from tests.conftest import REPO
from tests.deploy import compose

SERVICES = {"memory-service", "qdrant", "neo4j", "redis", "prometheus", "grafana"}
# A pulled image names an exact release: v1.2.3 or 1.2.3, optionally with a variant (-alpine).
PINNED = re.compile(r"^v?\d+\.\d+\.\d+([.-][A-Za-z0-9.-]+)?$")
DEPLOY_README = REPO / "deploy" / "README.md"
LOCAL_DEFAULT = "memory-local"


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    data = compose.load()
    assert set(data["services"]) == SERVICES
    return data["services"]


def _image_tag(image: str) -> str | None:
    name = image.rsplit("/", 1)[-1]
    return name.split(":", 1)[1] if ":" in name else None


def test_images_are_pinned_or_built_from_a_dockerfile_that_exists(services: dict[str, Any]) -> None:
    for name, service in services.items():
        if "build" in service:
            build = service["build"]
            context = compose.host_path(build.get("context", "."))
            dockerfile = context / build.get("dockerfile", "Dockerfile")
            assert dockerfile.is_file(), f"{name}: {dockerfile} is missing"
            for line in dockerfile.read_text().splitlines():
                if line.startswith("FROM "):
                    tag = _image_tag(line.split()[1])
                    assert tag and PINNED.match(tag), f"{dockerfile}: base image not pinned: {line}"
            continue
        tag = _image_tag(service["image"])
        assert tag is not None, f"{name}: image {service['image']} has no tag"
        assert tag != "latest" and PINNED.match(tag), f"{name}: {service['image']} is not an exact release"


def test_bind_mounts_name_files_that_exist_and_named_volumes_are_declared(services: dict[str, Any]) -> None:
    declared = set(compose.load().get("volumes") or {})
    binds = 0
    for name, service in services.items():
        for source, target, _ in compose.mounts(service):
            assert PurePosixPath(target).is_absolute(), f"{name}: mount target {target} is not absolute"
            if compose.is_bind(source):
                binds += 1
                assert compose.host_path(source).exists(), f"{name}: {source} does not exist"
            elif source:
                assert source in declared, f"{name}: volume {source} is not declared"
    assert binds >= 4  # the project, prometheus.yml, Grafana's provisioning and dashboards


def test_published_ports_bind_to_loopback(services: dict[str, Any]) -> None:
    published = 0
    for name, service in services.items():
        for spec in compose.port_specs(service):
            published += 1
            assert spec.startswith("127.0.0.1:") and spec.count(":") == 2, (
                f"{name}: {spec} is not on 127.0.0.1"
            )
    assert published >= 5


def test_neo4j_auth_comes_from_the_environment_with_a_documented_local_default(
    services: dict[str, Any],
) -> None:
    written = compose.raw()["services"]
    assert (
        compose.environment(written["neo4j"])["NEO4J_AUTH"] == f"neo4j/${{NEO4J_PASSWORD:-{LOCAL_DEFAULT}}}"
    )
    password = compose.environment(written["memory-service"])["MEMORY_GRAPH__PASSWORD"]
    assert password == f"${{NEO4J_PASSWORD:-{LOCAL_DEFAULT}}}", "the service must use the same password"
    assert compose.environment(services["neo4j"])["NEO4J_AUTH"] == f"neo4j/{LOCAL_DEFAULT}"
    chosen = compose.load({"NEO4J_PASSWORD": "s3cret-pass"})["services"]
    assert compose.environment(chosen["neo4j"])["NEO4J_AUTH"] == "neo4j/s3cret-pass"
    assert compose.environment(chosen["memory-service"])["MEMORY_GRAPH__PASSWORD"] == "s3cret-pass"
    readme = DEPLOY_README.read_text()
    assert "NEO4J_PASSWORD" in readme and LOCAL_DEFAULT in readme and "GRAFANA_ADMIN_PASSWORD" in readme
    assert re.search(r"[Cc]hange (them|it|both)", readme), "deploy/README.md must say to change the default"


def test_redis_keeps_an_append_only_file(services: dict[str, Any]) -> None:
    command = services["redis"]["command"]
    args = command if isinstance(command, list) else command.split()
    assert args[args.index("--appendonly") + 1] == "yes"
    assert any(target == "/data" for _, target, _ in compose.mounts(services["redis"]))


def _service_settings(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The settings memory-service reads from this environment (nothing else MEMORY_* set)."""
    import os

    for key in [k for k in os.environ if k.startswith("MEMORY_")]:
        monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return Settings()


def _setting_exists(key: str) -> bool:
    """MEMORY_A__B names the field b of section a (pydantic ignores unknown names silently)."""
    model: Any = Settings
    for part in key.removeprefix("MEMORY_").lower().split("__"):
        fields = getattr(model, "model_fields", {})
        if part not in fields:
            return False
        model = fields[part].annotation
    return True


def test_service_settings_fit_the_compose_network(
    services: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    service = services["memory-service"]
    env = compose.environment(service)
    for key in env:
        if key.startswith("MEMORY_"):
            assert _setting_exists(key), f"{key} is not a setting (see memory_service/settings.py)"
    settings = _service_settings(env, monkeypatch)
    # The side server listens on the compose network, on the port Prometheus scrapes.
    assert settings.server.http_enabled and settings.server.http_host == "0.0.0.0"
    assert str(settings.server.http_port) in [str(p) for p in service.get("expose", [])]
    # The stores are the compose services, reached by service name on their container ports.
    assert settings.qdrant.backend == "server" and settings.qdrant.url == "http://qdrant:6333"
    assert settings.graph.backend == "neo4j" and settings.graph.uri == "bolt://neo4j:7687"
    assert settings.graph.password is not None
    assert settings.graph.password.get_secret_value() == LOCAL_DEFAULT
    assert settings.redis.backend == "redis" and settings.redis.url is not None
    assert settings.redis.url.get_secret_value().startswith("redis://redis:6379/")
    for store in ("qdrant", "neo4j", "redis"):
        assert service["depends_on"][store]["condition"] == "service_healthy"
        assert services[store].get("healthcheck", {}).get("test"), f"{store} needs a healthcheck"


def test_service_mounts_the_project_read_only_and_keeps_data_in_a_volume(
    services: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    service = services["memory-service"]
    settings = _service_settings(compose.environment(service), monkeypatch)
    by_target = {target: (source, ro) for source, target, ro in compose.mounts(service)}
    root = str(settings.project_root)
    assert root in by_target, f"the project root {root} is not mounted"
    source, read_only = by_target[root]
    assert compose.is_bind(source) and read_only
    written = compose.raw()["services"]["memory-service"]["volumes"]
    assert any(str(v).startswith("${PROJECT_DIR") and str(v).endswith(f"}}:{root}:ro") for v in written), (
        "the user's project comes from PROJECT_DIR"
    )
    elsewhere = compose.load({"PROJECT_DIR": "/home/me/project"})["services"]["memory-service"]
    assert ("/home/me/project", root, True) in compose.mounts(elsewhere)
    data = PurePosixPath(str(settings.resolved_data_dir))
    volumes = [t for s, t, _ in compose.mounts(service) if not compose.is_bind(s)]
    assert any(data.is_relative_to(t) for t in volumes), f"{data} is not on a volume"
    assert service.get("stdin_open") is True and service.get("tty") is False


def test_prometheus_scrapes_the_service_metrics_endpoint(services: dict[str, Any]) -> None:
    config_path = compose.container_path(services["prometheus"], "/etc/prometheus/prometheus.yml")
    assert config_path is not None and config_path.is_file()
    config = yaml.safe_load(config_path.read_text())
    env = compose.environment(services["memory-service"])
    wanted = f"memory-service:{env['MEMORY_SERVER__HTTP_PORT']}"
    jobs = [
        job
        for job in config["scrape_configs"]
        if any(wanted in sc.get("targets", []) for sc in job.get("static_configs", []))
    ]
    assert len(jobs) == 1, f"no scrape job targets {wanted}"
    assert jobs[0].get("metrics_path", "/metrics") == "/metrics"
    # The target is the service's name: `docker compose run --use-aliases` gives the container it.
    for doc in (DEPLOY_README, REPO / "README.md"):
        assert "run --rm -T --use-aliases memory-service" in doc.read_text(), doc


def _provisioning(services: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    folder = compose.container_path(services["grafana"], f"/etc/grafana/provisioning/{kind}")
    assert folder is not None and folder.is_dir(), f"Grafana's {kind} provisioning is not mounted"
    files = sorted(folder.glob("*.yml")) + sorted(folder.glob("*.yaml"))
    assert files, f"no {kind} provisioning file in {folder}"
    return [yaml.safe_load(f.read_text()) for f in files]


def test_grafana_provisions_the_prometheus_datasource_and_the_dashboard(services: dict[str, Any]) -> None:
    grafana = services["grafana"]
    sources = [s for doc in _provisioning(services, "datasources") for s in doc["datasources"]]
    assert [s["type"] for s in sources] == ["prometheus"]
    prometheus_port = compose.port_specs(services["prometheus"])[0].rsplit(":", 1)[1]
    assert sources[0]["url"] == f"http://prometheus:{prometheus_port}"
    providers = [p for doc in _provisioning(services, "dashboards") for p in doc["providers"]]
    assert len(providers) == 1 and providers[0]["type"] == "file"
    folder = compose.container_path(grafana, providers[0]["options"]["path"])
    assert folder is not None and (folder / "memory-service.json").is_file()
    assert folder == REPO / "deploy" / "grafana" / "dashboards"
    home = compose.environment(grafana).get("GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH")
    assert home is not None
    home_path = compose.container_path(grafana, home)
    assert home_path is not None and home_path.is_file()


def test_readme_registers_the_compose_service_with_claude_code() -> None:
    text = DEPLOY_README.read_text()
    command = re.search(r"claude mcp add [^\n]*", text.replace("\\\n", " "))  # shell line continuations
    assert command is not None
    line = command.group(0)
    assert "PROJECT_DIR=" in line and "docker compose -f" in line
    assert line.rstrip().endswith("run --rm -T --use-aliases memory-service"), line
    assert "docker compose up -d" in text and "http://localhost:3000" in text
    assert Path(REPO / "deploy" / "Dockerfile").is_file()
