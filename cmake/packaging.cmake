# Install rules and the Debian packages (CPack's DEB generator), built by
# scripts/package; docs/packaging.md says what each package holds and why.
#
#   aevatar-sandbox-init  /usr/bin/chrono-sandbox-init, root:root 0755: the
#                         engine execs it from beside the running binary and
#                         refuses it unless only root may write it and /usr/bin
#   chrono-sandbox        the executor, its unit, /etc/aevatar/chrono-sandbox.toml
#   nyxid                 the broker, its unit, /etc/aevatar/nyxid.toml
#   aevatar               the orchestrator and `aevatar up`, its unit,
#                         /etc/aevatar/aevatar.toml
#   aevatar-doc           docs/ and the README
#
# The binaries are static, so the packages depend only on what the services
# run (packaging/depends.txt, shared with scripts/setup).

# `cmake --install` and cpack install what was built; they do not build
# every test first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
set(AEVATAR_PACKAGE_VERSION "0.1.0" CACHE STRING "version of the .deb packages")
set(packaging_dir ${PROJECT_SOURCE_DIR}/packaging)
set(generated_control ${CMAKE_BINARY_DIR}/packaging/control)

# Every file is root-owned in the archive (CPack writes uid 0); the modes are
# spelled out so that the umask of the build cannot loosen them.
set(executable_mode OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
                    WORLD_EXECUTE)
set(file_mode OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

install(TARGETS chrono-sandbox-init RUNTIME DESTINATION bin PERMISSIONS ${executable_mode}
        COMPONENT sandbox-init)
foreach(service chrono-sandbox nyxid aevatar)
  install(TARGETS ${service} RUNTIME DESTINATION bin PERMISSIONS ${executable_mode}
          COMPONENT ${service})
  install(FILES ${packaging_dir}/systemd/${service}.service DESTINATION lib/systemd/system
          PERMISSIONS ${file_mode} COMPONENT ${service})
  install(FILES ${packaging_dir}/config/${service}.toml DESTINATION /etc/aevatar
          PERMISSIONS ${file_mode} COMPONENT ${service})
endforeach()
# The bundled skills `aevatar up` (next to the binary: ../share/aevatar/skills)
# and aevatar.toml's bundled-skills-dir publish to the skill registry.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/skills/ DESTINATION share/aevatar/skills
        FILE_PERMISSIONS ${file_mode} COMPONENT aevatar)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/aevatar-doc
        PERMISSIONS ${file_mode} COMPONENT doc)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/aevatar-doc/docs
        FILE_PERMISSIONS ${file_mode} COMPONENT doc FILES_MATCHING PATTERN "*.md")

# Maintainer scripts: a service that runs unprivileged gets its system user
# at configure time (postinst.in); every service reloads systemd's units.
function(aevatar_control_files component user)
  set(dir ${generated_control}/${component})
  set(SERVICE_USER ${user})
  configure_file(${packaging_dir}/debian/postinst.in ${dir}/postinst @ONLY
                 FILE_PERMISSIONS ${executable_mode})
  configure_file(${packaging_dir}/debian/postrm.in ${dir}/postrm @ONLY
                 FILE_PERMISSIONS ${executable_mode})
  file(WRITE ${dir}/conffiles "/etc/aevatar/${component}.toml\n")
  string(TOUPPER ${component} upper)
  set(CPACK_DEBIAN_${upper}_PACKAGE_CONTROL_EXTRA
      "${dir}/postinst;${dir}/postrm;${dir}/conffiles" PARENT_SCOPE)
endfunction()
aevatar_control_files(chrono-sandbox "")
aevatar_control_files(nyxid nyxid)
aevatar_control_files(aevatar aevatar)

# Depends/Recommends from packaging/depends.txt ("PACKAGE FIELD DEPENDENCY").
set(own_init "aevatar-sandbox-init (= ${AEVATAR_PACKAGE_VERSION})")
set(depends_chrono-sandbox "${own_init}")
set(depends_aevatar "${own_init}")
file(STRINGS ${packaging_dir}/depends.txt depends_lines REGEX "^[a-z]")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${packaging_dir}/depends.txt)
foreach(line IN LISTS depends_lines)
  if(NOT line MATCHES "^([a-z-]+) +(Depends|Recommends) +([a-z0-9.+-]+)$")
    message(FATAL_ERROR "packaging/depends.txt: cannot read \"${line}\"")
  endif()
  set(field_var "${CMAKE_MATCH_2}_${CMAKE_MATCH_1}")
  string(TOLOWER "${field_var}" field_var)
  list(APPEND ${field_var} "${CMAKE_MATCH_3}")
endforeach()
foreach(component chrono-sandbox nyxid aevatar)
  string(TOUPPER ${component} upper)
  list(JOIN depends_${component} ", " CPACK_DEBIAN_${upper}_PACKAGE_DEPENDS)
  list(JOIN recommends_${component} ", " CPACK_DEBIAN_${upper}_PACKAGE_RECOMMENDS)
  set(CPACK_DEBIAN_${upper}_PACKAGE_NAME ${component})
endforeach()
set(CPACK_DEBIAN_SANDBOX-INIT_PACKAGE_NAME aevatar-sandbox-init)
set(CPACK_DEBIAN_DOC_PACKAGE_NAME aevatar-doc)
set(CPACK_DEBIAN_DOC_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_DOC_PACKAGE_SECTION doc)

set(CPACK_COMPONENT_SANDBOX-INIT_DESCRIPTION "Aevatar Sandbox: the sandbox init (chrono-sandbox-init)\nThe freestanding init the isolation engine execs for every run, installed\nroot:root 0755 beside the binaries that run sandboxes.")
set(CPACK_COMPONENT_CHRONO-SANDBOX_DESCRIPTION "Aevatar Sandbox: chrono-sandbox, the code execution service\nRuns Python, JavaScript, TypeScript and bash in namespaces, cgroups and\nseccomp (or gVisor). systemd unit chrono-sandbox.service.")
set(CPACK_COMPONENT_NYXID_DESCRIPTION "Aevatar Sandbox: nyxid, the credential broker\nAccounts, Agent Keys, delegation tokens and the proxy to the services.\nsystemd unit nyxid.service.")
set(CPACK_COMPONENT_AEVATAR_DESCRIPTION "Aevatar Sandbox: aevatar, the orchestrator\nTools, workflows and approvals over nyxid and chrono-sandbox, its CLI and\n`aevatar up` (the three services in one process). systemd unit aevatar.service.")
set(CPACK_COMPONENT_DOC_DESCRIPTION "Aevatar Sandbox: documentation\nThe operator and API documentation (docs/*.md).")

set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL sandbox-init chrono-sandbox nyxid aevatar doc)
set(CPACK_PACKAGE_NAME aevatar-sandbox)
set(CPACK_PACKAGE_VERSION ${AEVATAR_PACKAGE_VERSION})
set(CPACK_PACKAGE_CONTACT "Aevatar Sandbox maintainers <maintainers@aevatar.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)  # static binaries: no shared libraries
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
