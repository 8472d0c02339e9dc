"""The fleet file, ``panefleet.toml`` (docs/fleet.md): the teams of workers a fleet should have."""

from pure.fleet.spec import (
    FLEET_CLIS,
    FleetFile,
    FleetFileProblem,
    TeamSpec,
    WorkerGroup,
    fleet_as_json,
    parse_fleet,
    role_problem,
)

__all__ = ["FLEET_CLIS", "FleetFile", "FleetFileProblem", "TeamSpec", "WorkerGroup", "fleet_as_json", "parse_fleet",
           "role_problem"]
