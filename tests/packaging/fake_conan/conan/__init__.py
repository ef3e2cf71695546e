# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""A stand-in for the parts of Conan 2's API that conan/conanfile.py imports,
so that tests/packaging/check_conan.py can call the recipe's methods without
Conan (not packaged for Debian, its registry not reachable here). Only what
the recipe uses; behaviour after Conan 2's documentation (docs/packaging.md
says what differs). Not a Conan: no profiles, no dependency graph, no cache."""
import types


class _Values:
    """Options/settings: attribute access, assignment, get_safe()."""

    def __init__(self, values):
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name not in values:
            raise AttributeError(f"'{name}' is not defined")
        return values[name]

    def __setattr__(self, name, value):
        values = object.__getattribute__(self, "_values")
        if name not in values:
            raise AttributeError(f"'{name}' is not defined: cannot be assigned")
        values[name] = value

    def get_safe(self, name, default=None):
        return object.__getattribute__(self, "_values").get(name, default)

    def items(self):
        return object.__getattribute__(self, "_values").items()


class CppInfo:
    """cpp_info and its components: the fields package_info() sets."""

    def __init__(self, with_components=True):
        self.includedirs = ["include"]
        self.libdirs = ["lib"]
        self.bindirs = ["bin"]
        self.libs = []
        self.defines = []
        self.requires = []
        self.system_libs = []
        self._properties = {}
        if with_components:
            self.components = _Components()

    def set_property(self, name, value):
        self._properties[name] = value

    def get_property(self, name):
        return self._properties.get(name)


class _Components(dict):
    def __missing__(self, key):
        self[key] = CppInfo(with_components=False)
        return self[key]


class _Info:
    def __init__(self, conanfile):
        self.options = conanfile.options
        self.settings = conanfile.settings
        self.cleared = False

    def clear(self):
        self.cleared = True


class ConanFile:
    """Attributes the harness sets: recipe_folder, export_sources_folder,
    source_folder, build_folder, generators_folder, package_folder."""

    name = None
    version = None
    options = {}
    default_options = {}
    settings = ()
    package_type = None

    def __init__(self, option_values=None, setting_values=None):
        values = dict(self.default_options)
        for k, v in (option_values or {}).items():
            if k not in type(self).options:
                raise ValueError(f"option '{k}' is not declared by the recipe")
            if v not in type(self).options[k]:
                raise ValueError(f"option {k}={v!r} is not one of {type(self).options[k]}")
            values[k] = v
        self.options = _Values(values)
        self.settings = _Values(setting_values or {})
        self.info = _Info(self)
        self.cpp_info = CppInfo()
        self.requires_seen = []
        self.output = types.SimpleNamespace(info=print, warning=print)

    def requires(self, ref, **traits):
        self.requires_seen.append((ref, traits))

    def run(self, command, **kwargs):
        import subprocess
        subprocess.run(command, shell=True, check=True)
