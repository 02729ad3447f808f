# Install rules: the command-line tool (the GUI joins it when it exists).
include(GNUInstallDirs)
install(TARGETS modebench-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
set(CPACK_PACKAGE_NAME modebench)
set(CPACK_PACKAGE_CONTACT "ModeBench developers")
set(CPACK_GENERATOR TGZ)
include(CPack)
