"""A heavy library named at the top of the module that computes with it, imported at its first use.

`stats = lazy_module("scipy.stats")` (in annotation, the bottom layer, so scoring and analysis share it;
it imports nothing of Django) reads like the import it stands for, but nothing is imported
(nor put in `sys.modules`) until an attribute is first looked up: loading the apps stays light
(tests/test_startup.py) while the code keeps writing `stats.spearmanr(...)`. lazy_loader's `load`
was used here first; it registers a not-yet-executed module in `sys.modules`, which makes every
start-up check that reads `sys.modules` report the library as loaded. Its `attach` still serves
for the project's own submodules (scoring/adem/__init__.py).
"""

import importlib


class LazyModule:
    """Stands for module `name`; the first attribute looked up imports it, errors unchanged."""

    def __init__(self, name):
        self.__dict__["_lazy_name"] = name

    def __getattr__(self, attribute):
        module = self.__dict__.get("_lazy_module")
        if module is None:
            module = importlib.import_module(self.__dict__["_lazy_name"])
            self.__dict__["_lazy_module"] = module
        return getattr(module, attribute)

    def __repr__(self):
        state = "imported" if "_lazy_module" in self.__dict__ else "not imported yet"
        return f"<lazy module {self.__dict__['_lazy_name']!r}, {state}>"


def lazy_module(name):
    return LazyModule(name)
