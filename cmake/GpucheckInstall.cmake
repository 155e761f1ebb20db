# `cmake --install` layout and the packages:
#   bin/gpucheck
#   share/gpucheck/configs/{default.toml,skus.toml,qualify/*.toml}, share/gpucheck/schema/
#   share/man/man1/gpucheck.1            (help2man from --help, every subcommand in one page)
#   share/bash-completion/completions/gpucheck, share/zsh/vendor-completions/_gpucheck
# The man page and the completions are generated from the built binary (every subcommand path its
# hidden `__cli-spec` names, each one's --help and options), so they say what the code does.
# CPack makes a .deb (Depends: only what the binary needs at load time) and a .tar.gz of the same
# tree; the `wheel` target a Python wheel of it (cmake/GpucheckWheel.cmake).
include(GNUInstallDirs)

install(TARGETS gpucheck RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gpucheck/configs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schema/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gpucheck/schema)

set(gpucheck_doc_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)

find_program(GPUCHECK_HELP2MAN help2man)
if(GPUCHECK_HELP2MAN)
  add_custom_command(
    OUTPUT ${gpucheck_doc_dir}/gpucheck.1
    COMMAND ${CMAKE_COMMAND} -DGPUCHECK=$<TARGET_FILE:gpucheck> -DHELP2MAN=${GPUCHECK_HELP2MAN}
            -DOUT=${gpucheck_doc_dir}/gpucheck.1 -P ${PROJECT_SOURCE_DIR}/cmake/GpucheckManPage.cmake
    DEPENDS gpucheck ${PROJECT_SOURCE_DIR}/cmake/GpucheckManPage.cmake
            ${PROJECT_SOURCE_DIR}/cmake/GpucheckCliSpec.cmake
    COMMENT "Generating the man page gpucheck.1 from --help (help2man)"
    VERBATIM)
  add_custom_target(gpucheck_man ALL DEPENDS ${gpucheck_doc_dir}/gpucheck.1)
  install(FILES ${gpucheck_doc_dir}/gpucheck.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "gpucheck: no help2man, so no man page (Debian: apt install help2man)")
endif()

add_custom_command(
  OUTPUT ${gpucheck_doc_dir}/gpucheck.bash ${gpucheck_doc_dir}/_gpucheck
  COMMAND ${CMAKE_COMMAND} -DGPUCHECK=$<TARGET_FILE:gpucheck>
          -DBASH_TEMPLATE=${PROJECT_SOURCE_DIR}/tools/completion/gpucheck.bash.in
          -DZSH_TEMPLATE=${PROJECT_SOURCE_DIR}/tools/completion/_gpucheck.in
          -DBASH_OUT=${gpucheck_doc_dir}/gpucheck.bash -DZSH_OUT=${gpucheck_doc_dir}/_gpucheck
          -P ${PROJECT_SOURCE_DIR}/cmake/GpucheckCompletion.cmake
  DEPENDS gpucheck ${PROJECT_SOURCE_DIR}/cmake/GpucheckCompletion.cmake
          ${PROJECT_SOURCE_DIR}/cmake/GpucheckCliSpec.cmake
          ${PROJECT_SOURCE_DIR}/tools/completion/gpucheck.bash.in
          ${PROJECT_SOURCE_DIR}/tools/completion/_gpucheck.in
  COMMENT "Generating the bash and zsh completions from gpucheck __cli-spec"
  VERBATIM)
add_custom_target(gpucheck_completion ALL
                  DEPENDS ${gpucheck_doc_dir}/gpucheck.bash ${gpucheck_doc_dir}/_gpucheck)
install(FILES ${gpucheck_doc_dir}/gpucheck.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME gpucheck)
install(FILES ${gpucheck_doc_dir}/_gpucheck DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
include(GpucheckWheel)

# Packages: `cpack` (or tools/package.sh) in the build directory.
set(CPACK_PACKAGE_NAME gpucheck)
set(CPACK_PACKAGE_VENDOR "gpucheck")
set(CPACK_PACKAGE_CONTACT "gpucheck maintainers <gpucheck@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "Is this machine's GPU stack set up right, and how fast is it really? Probes, checks and "
    "benchmarks CUDA, OpenCL and the CPU; every GPU and BLAS library is opened at run time.")
set(CPACK_GENERATOR "DEB;TGZ")
set(CPACK_STRIP_FILES ON)
set(CPACK_THREADS 0)
# The .deb: its Depends come from the binary's own symbol versions (dpkg-shlibdeps), which is the
# C library alone; what gpucheck opens at run time is only recommended.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ocl-icd-libopencl1, libopenblas0")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "clinfo")
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/GpucheckCPackOptions.cmake)
include(CPack)
