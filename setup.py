"""Build hook: a wheel carries the training configs as package data, sam_model/configs/*.yaml.

The files are the checkout's top-level ``configs/*.yaml`` (one source of truth); a built wheel gets copies
under the package, so ``sam-train fit --config adapt.yaml`` finds them in any install
(sam_model.cli_config.installed_configs_dir). An editable install reads the checkout's ``configs/`` directly.
Everything else about the package is in pyproject.toml.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithConfigs(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        out = Path(self.build_lib) / "sam_model" / "configs"
        self.mkpath(str(out))
        for config in sorted(Path(__file__).resolve().parent.joinpath("configs").glob("*.yaml")):
            self.copy_file(str(config), str(out / config.name))


setup(cmdclass={"build_py": BuildPyWithConfigs})
