def pytest_configure(config):
    config.addinivalue_line("markers", "network: needs PyPI (GRPO_OFFLINE=1 skips it)")
