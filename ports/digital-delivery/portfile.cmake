# Copyright (c) 2026 The digital_delivery authors
# Distributed under the Boost Software License, Version 1.0.
# (See accompanying file LICENSE_1_0.txt or copy at https://www.boost.org/LICENSE_1_0.txt)
# vcpkg port of digital_delivery, used as an overlay port from the source tree
# it lives in (vcpkg install digital-delivery --overlay-ports=<tree>/ports):
# the sources are this repository's. A port for a registry replaces the
# SOURCE_PATH line with vcpkg_from_github() naming the release tag and its
# SHA512 (docs/packaging.md).
set(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../..")

# Header-only by default: without features nothing is compiled.
vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
    FEATURES
        compiled DIGITAL_DELIVERY_BUILD_COMPILED
        cli      DIGITAL_DELIVERY_BUILD_CLI
        sandbox  DIGITAL_DELIVERY_BUILD_SANDBOX
)
if(NOT "compiled" IN_LIST FEATURES AND NOT "cli" IN_LIST FEATURES AND NOT "sandbox" IN_LIST FEATURES)
    # Headers and package files only: one configuration is enough.
    set(VCPKG_BUILD_TYPE release)
endif()

vcpkg_cmake_configure(
    SOURCE_PATH "${SOURCE_PATH}"
    OPTIONS
        ${FEATURE_OPTIONS}
        -DDIGITAL_DELIVERY_INSTALL=ON
        -DDIGITAL_DELIVERY_BUILD_TESTS=OFF
        -DDIGITAL_DELIVERY_BUILD_EXAMPLES=OFF
        -DDIGITAL_DELIVERY_BUILD_BENCHMARKS=OFF
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME digital_delivery CONFIG_PATH lib/cmake/digital_delivery)

if("compiled" IN_LIST FEATURES)
    # A port with a library keeps its pkg-config files in lib/pkgconfig.
    foreach(dir IN ITEMS "${CURRENT_PACKAGES_DIR}" "${CURRENT_PACKAGES_DIR}/debug")
        if(EXISTS "${dir}/share/pkgconfig/digital_delivery.pc")
            file(RENAME "${dir}/share/pkgconfig/digital_delivery.pc" "${dir}/lib/pkgconfig/digital_delivery.pc")
            file(REMOVE_RECURSE "${dir}/share/pkgconfig")
        endif()
    endforeach()
endif()

set(tools "")
if("cli" IN_LIST FEATURES)
    list(APPEND tools ddctl)
endif()
if("sandbox" IN_LIST FEATURES)
    list(APPEND tools digital-delivery-sandbox)
    # The pkg-config variable sandbox_exe follows the executable into tools/.
    file(GLOB_RECURSE pc_files "${CURRENT_PACKAGES_DIR}/*.pc")
    foreach(pc IN LISTS pc_files)
        vcpkg_replace_string("${pc}" [[${prefix}/bin/digital-delivery-sandbox]]
                             "\${prefix}/tools/${PORT}/digital-delivery-sandbox" IGNORE_UNCHANGED)
    endforeach()
endif()
if(tools)
    vcpkg_copy_tools(TOOL_NAMES ${tools} AUTO_CLEAN)
endif()
# ddctl's shell completions: with the tool, not in share/ of the whole installed tree.
if("cli" IN_LIST FEATURES)
    file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/share/bash-completion" "${CURRENT_PACKAGES_DIR}/share/zsh"
                        "${CURRENT_PACKAGES_DIR}/share/fish")
    file(INSTALL "${SOURCE_PATH}/tools/ddctl/completion/" DESTINATION "${CURRENT_PACKAGES_DIR}/tools/${PORT}/completion")
endif()
vcpkg_fixup_pkgconfig()

if(NOT VCPKG_BUILD_TYPE)
    file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug/include" "${CURRENT_PACKAGES_DIR}/debug/share")
endif()
# The header-only package has nothing left in lib/.
file(GLOB lib_left "${CURRENT_PACKAGES_DIR}/lib/*")
if(NOT lib_left)
    file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/lib")
endif()
# The licence text (also installed in share/doc/ by the project's own rules).
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/share/doc")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE_1_0.txt")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
