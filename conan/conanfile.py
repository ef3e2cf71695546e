# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
"""Conan 2 recipe of digital_delivery, from the source tree it lives in
(conan create conan/ ...). Header-only by default; the options compiled, cli
and sandbox add the library compiled once, ddctl and digital-delivery-sandbox.
The version is the file VERSION at the top of the tree. docs/packaging.md."""
import os

from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy, load, rmdir

required_conan_version = ">=2.0"


class DigitalDeliveryConan(ConanFile):
    name = "digital-delivery"
    description = ("Header-only C++20 coroutine client for the Digital Delivery Service HTTP API, "
                   "on Boost.Asio, Beast, JSON and URL")
    license = "BSL-1.0"
    topics = ("http", "asio", "beast", "coroutines", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {
        "compiled": [True, False],
        "cli": [True, False],
        "sandbox": [True, False],
    }
    default_options = {
        "compiled": False,
        "cli": False,
        "sandbox": False,
    }

    # The sources are the tree above this folder (the recipe lives in conan/).
    def _source_root(self):
        return os.path.join(self.recipe_folder, "..")

    def set_version(self):
        self.version = load(self, os.path.join(self._source_root(), "VERSION")).strip()

    def export_sources(self):
        root = self._source_root()
        for pattern in ("CMakeLists.txt", "VERSION", "LICENSE_1_0.txt", "cmake/*", "include/*", "src/*",
                        "tools/*", "docs/reference/*"):
            copy(self, pattern, root, self.export_sources_folder)

    def configure(self):
        if self.options.cli:
            # ddctl links the library compiled once.
            self.options.compiled = True
        if self.options.compiled or self.options.cli or self.options.sandbox:
            self.package_type = "static-library"

    def layout(self):
        cmake_layout(self, src_folder=".")

    def requirements(self):
        self.requires("boost/[>=1.81.0]", transitive_headers=True, transitive_libs=True)
        self.requires("openssl/[>=1.1 <4]", transitive_headers=True, transitive_libs=True)
        if self.options.cli:
            # libjq is taken from the system: it is not a Conan Center package.
            self.requires("cli11/[>=2.2 <3]")

    def package_id(self):
        if not (self.options.compiled or self.options.cli or self.options.sandbox):
            self.info.clear()

    def validate(self):
        if self.settings.get_safe("compiler.cppstd"):
            check_min_cppstd(self, 20)
        if self.settings.os == "Windows":
            raise ConanInvalidConfiguration("digital_delivery is POSIX only")

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["DIGITAL_DELIVERY_INSTALL"] = True
        tc.cache_variables["DIGITAL_DELIVERY_BUILD_TESTS"] = False
        tc.cache_variables["DIGITAL_DELIVERY_BUILD_EXAMPLES"] = False
        tc.cache_variables["DIGITAL_DELIVERY_BUILD_BENCHMARKS"] = False
        tc.cache_variables["DIGITAL_DELIVERY_BUILD_COMPILED"] = bool(self.options.compiled)
        tc.cache_variables["DIGITAL_DELIVERY_BUILD_CLI"] = bool(self.options.cli)
        tc.cache_variables["DIGITAL_DELIVERY_BUILD_SANDBOX"] = bool(self.options.sandbox)
        tc.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        copy(self, "LICENSE_1_0.txt", self.source_folder, os.path.join(self.package_folder, "licenses"))
        cmake = CMake(self)
        cmake.install()
        # Conan generates its own CMake and pkg-config files from package_info();
        # the licence is in licenses/. (The data root is share/, or res/ where
        # Conan's toolchain sets CMAKE_INSTALL_DATAROOTDIR.)
        for folder in ("lib/cmake", "lib/pkgconfig", "share/pkgconfig", "res/pkgconfig", "share/doc", "res/doc"):
            rmdir(self, os.path.join(self.package_folder, folder))
        for folder in ("lib", "share", "res"):  # left empty by a header-only build
            path = os.path.join(self.package_folder, folder)
            if os.path.isdir(path) and not os.listdir(path):
                rmdir(self, path)

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "digital_delivery")
        self.cpp_info.set_property("cmake_target_name", "digital_delivery::digital_delivery")

        lib = self.cpp_info.components["digital_delivery"]
        lib.set_property("cmake_target_name", "digital_delivery::digital_delivery")
        lib.set_property("pkg_config_name", "digital_delivery")
        lib.includedirs = ["include"]
        lib.libdirs = []
        lib.bindirs = []
        lib.requires = ["boost::headers", "boost::json", "boost::url", "openssl::ssl", "openssl::crypto"]
        lib.system_libs = ["pthread"]

        if self.options.compiled:
            compiled = self.cpp_info.components["compiled"]
            compiled.set_property("cmake_target_name", "digital_delivery::compiled")
            compiled.set_property("pkg_config_name", "digital_delivery_compiled")
            compiled.includedirs = []
            compiled.libdirs = ["lib"]
            compiled.bindirs = []
            compiled.libs = ["digital_delivery"]
            compiled.defines = ["DIGITAL_DELIVERY_SEPARATE_COMPILATION"]
            compiled.requires = ["digital_delivery"]

        if self.options.cli or self.options.sandbox:
            # ddctl and digital-delivery-sandbox: on PATH in Conan's run
            # environment (a component of their own, with no library).
            tools = self.cpp_info.components["tools"]
            tools.set_property("cmake_target_name", "digital_delivery::tools")
            tools.includedirs = []
            tools.libdirs = []
            tools.bindirs = ["bin"]
