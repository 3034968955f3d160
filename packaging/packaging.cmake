# The Debian package: `cpack -G DEB` in the build directory (packaging/README.md).
# Included once, at the end of the top-level CMakeLists.txt, after every install() rule.
# Installed: the kcx executable (app/CMakeLists.txt), the desktop entry, AppStream
# metadata, icon and MIME types below, and the documentation. Tests, benchmarks and the
# static libraries have no install() rule and stay out of the package.

set(KCX_APP_ID io.github.kcx.kcx)   # AppStream id = desktop file id = app/main.cpp's desktopFileName
set(KCX_PACKAGING_DIR ${PROJECT_SOURCE_DIR}/packaging)

install(FILES ${KCX_PACKAGING_DIR}/kcx.desktop DESTINATION share/applications RENAME ${KCX_APP_ID}.desktop)
install(FILES ${KCX_PACKAGING_DIR}/kcx.metainfo.xml DESTINATION share/metainfo RENAME ${KCX_APP_ID}.metainfo.xml)
install(FILES ${KCX_PACKAGING_DIR}/kcx-mime.xml DESTINATION share/mime/packages RENAME kcx.xml)
install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/kcx.svg DESTINATION share/icons/hicolor/scalable/apps)

# Documentation, with README.md's relative links intact (docs/…, docs/images/…).
file(GLOB KCX_DOC_PAGES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
file(GLOB KCX_EXAMPLE_CONTRACTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/resources/contracts/*.yaml)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/kcx)
install(FILES ${KCX_DOC_PAGES} DESTINATION share/doc/kcx/docs)
install(FILES ${PROJECT_SOURCE_DIR}/docs/images/kcx-demo.png DESTINATION share/doc/kcx/docs/images)
install(FILES ${KCX_EXAMPLE_CONTRACTS} DESTINATION share/doc/kcx/examples)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kcx)
set(CPACK_PACKAGE_VENDOR "KCX")
set(CPACK_PACKAGE_CONTACT "KCX maintainers <maintainers@kcx.invalid>")   # placeholder: packaging/README.md
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Kernel Contract Explorer: check inference kernels against training kernels")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # kcx_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)    # Depends from the executable's libraries (dpkg-shlibdeps)
# The window icon is SVG: Qt draws it with the icon engine plugin of libqt6svg6, which
# dpkg-shlibdeps cannot see (a plugin, loaded at run time), so name it.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libqt6svg6")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-wayland")
# The synopsis is CPACK_PACKAGE_DESCRIPTION_SUMMARY; this is the extended description.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "KCX loads what a training kernel and an inference kernel computed for the same
sequences of one policy (JSON Lines or safetensors runs), measures the divergence
per token, per sequence and per run, and checks it against a kernel contract (YAML).
The window shows every clause's verdict, a divergence heatmap, histograms and the
bound chain, with thresholds editable by dragging; `kcx check` is the headless
offline-CI gate, and `kcx sign` / `kcx verify` handle Ed25519 sign-off records.")

include(CPack)
