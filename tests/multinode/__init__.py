"""Multi-node tests on simulated nodes (a package, so its conftest is not the suite's)."""
