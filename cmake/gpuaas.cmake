# Helpers shared by every target: warnings, proto generation, test registration.

# Designated initializers that leave fields at their defaults are the point of C++20 options
# structs, and GCC 12's -Wrestrict misfires on std::string concatenation (GCC PR 105329).
set(GPUAAS_WARNINGS -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
    -Wno-restrict)
# Warnings fail the Release build; the sanitized one only shows them, because GCC 12's
# instrumented code at -O1 draws false -Wstringop-overflow and -Wmaybe-uninitialized reports.
# The fuzz build (clang) only shows them too: the tree is kept warning-free under GCC 12.
if(GPUAAS_WERROR AND NOT GPUAAS_SANITIZE AND NOT GPUAAS_FUZZ)
  list(APPEND GPUAAS_WARNINGS -Werror)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  list(REMOVE_ITEM GPUAAS_WARNINGS -Wno-restrict)  # GCC's only
endif()

# Batched ("unity") compilation: a target's .cc files are compiled GPUAAS_UNITY_BATCH at a time,
# as one translation unit that includes them, so the gRPC, protobuf and abseil headers that every
# file includes are parsed, and their inline code instantiated and optimised, once a batch rather
# than once a file. The batch files include the sources by their path from the top of the tree
# (CMake's own UNITY_BUILD writes absolute paths, which would make ccache miss in a clone at
# another path). A name defined twice in one target's anonymous namespaces is then a compile
# error: name such helpers for what they do, or move them to a shared header. Libraries only:
# a test's files each define their own fixtures and helpers under the same short names.
option(GPUAAS_UNITY "Compile each target's sources in batches" ON)
set(GPUAAS_UNITY_BATCH 8 CACHE STRING "Sources per batch translation unit")
if(GPUAAS_UNITY)
  # GCC flags a type from an anonymous namespace used in a class of an #included file, which
  # is what every batched .cc is; the warning is meant for headers.
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    list(APPEND GPUAAS_WARNINGS -Wno-subobject-linkage)
  endif()
endif()

# Test code compiles at -O1 in every build, the services' and libraries' code at the build's
# own level (-O3 in Release). Tests are half the tree's translation units and are not batched;
# -O3 nearly doubles their compile time (instance_images_test.cc: 19 s at -O3, 11 s at -O1, 10 s
# just to parse), which a fresh machine pays in full, and buys a test nothing. tests/ sets it for
# its whole directory (the harness libraries too); gpuaas_test for tests kept beside their code.
if(NOT GPUAAS_SANITIZE)  # which compiles everything at -O1 already
  set(GPUAAS_TEST_OPTIMIZATION -O1)
endif()

# gpuaas_batch_sources(OUT TARGET SOURCES...): OUT = what to compile for TARGET's SOURCES.
function(gpuaas_batch_sources out target)
  set(batchable)
  set(rest)
  foreach(src ${ARGN})
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${abs})
    string(FIND "${abs}/" "${PROJECT_BINARY_DIR}/" in_build)
    if(abs MATCHES "\\.cc$" AND NOT rel MATCHES "^\\.\\." AND NOT in_build EQUAL 0)
      list(APPEND batchable ${rel})
    else()
      list(APPEND rest ${src})
    endif()
  endforeach()
  list(LENGTH batchable n)
  if(NOT GPUAAS_UNITY OR n LESS 2)
    set(${out} ${ARGN} PARENT_SCOPE)
    return()
  endif()
  set(batches)
  set(content "")
  set(count 0)
  set(index 0)
  foreach(rel ${batchable})
    string(APPEND content "#include \"${rel}\"\n")
    math(EXPR count "${count} + 1")
    if(count EQUAL GPUAAS_UNITY_BATCH)
      set(file ${CMAKE_CURRENT_BINARY_DIR}/${target}_batch${index}.cc)
      file(CONFIGURE OUTPUT ${file} CONTENT "${content}")
      list(APPEND batches ${file})
      set(content "")
      set(count 0)
      math(EXPR index "${index} + 1")
    endif()
  endforeach()
  if(count GREATER 0)
    set(file ${CMAKE_CURRENT_BINARY_DIR}/${target}_batch${index}.cc)
    file(CONFIGURE OUTPUT ${file} CONTENT "${content}")
    list(APPEND batches ${file})
  endif()
  set(${out} ${batches} ${rest} PARENT_SCOPE)
endfunction()

# gpuaas_library(NAME SOURCES... DEPS...) -> target gpuaas_<name>, alias gpuaas::<name>.
function(gpuaas_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  gpuaas_batch_sources(sources gpuaas_${name} ${ARG_SOURCES})
  add_library(gpuaas_${name} STATIC ${sources})
  add_library(gpuaas::${name} ALIAS gpuaas_${name})
  target_include_directories(gpuaas_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(gpuaas_${name} PRIVATE ${GPUAAS_WARNINGS})
  target_link_libraries(gpuaas_${name} PUBLIC ${ARG_DEPS})
endfunction()

# gpuaas_test(NAME SOURCES... DEPS... [LABELS...] [FIXTURES...] [ENV VAR=value...] [COST s]) ->
# a GoogleTest binary run by ctest, with ENV in its environment. COST: about how many seconds it
# takes in CI, for the tests over a minute (see GPUAAS_STACK_TEST_COST).
# FIXTURES names ctest fixtures the test requires (e.g. postgres, ceph). LABELS: unit (the
# default), db, integration (in-process services on real PostgreSQL), e2e (real processes), drill (long
# end-to-end drills: crashes at every step, scale, whole images) and slow (volumes). The
# sanitized build leaves drill and slow out altogether: sanitizers find their bugs in the
# shorter tests of the same code, and the Release pass still runs them.
function(gpuaas_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;COST" "SOURCES;DEPS;LABELS;FIXTURES;ENV" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(GPUAAS_SANITIZE AND ("drill" IN_LIST ARG_LABELS OR "slow" IN_LIST ARG_LABELS))
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${GPUAAS_WARNINGS} ${GPUAAS_TEST_OPTIMIZATION})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")
  if(ARG_COST)
    set_tests_properties(${name} PROPERTIES COST ${ARG_COST})
  endif()
  set(env ${ARG_ENV})
  if(GPUAAS_SANITIZE)
    # Inherited by the services a test starts as child processes, which leak the same way.
    list(APPEND env "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/cmake/lsan.supp")
  endif()
  if(ARG_FIXTURES)
    # The postgres fixture writes the throwaway cluster's DSN here (tests/pg_fixture).
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED "${ARG_FIXTURES}")
    list(APPEND env "GPUAAS_TEST_PG_DSN_FILE=${PROJECT_BINARY_DIR}/test-pg/dsn")
    # The ceph fixture writes its cluster's ceph.conf and keyring paths here (tests/ceph_fixture).
    if("ceph" IN_LIST ARG_FIXTURES)
      list(APPEND env "GPUAAS_TEST_CEPH_DIR=${PROJECT_BINARY_DIR}/test-ceph")
    endif()
  endif()
  if(env)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${env}")
  endif()
endfunction()

# ctest starts the costliest tests first (COST), and a fresh build tree has no timing history
# (CTestCostData.txt) to go by, so the long tests say what they cost. ctest weighs dependency
# depth before cost, though: every PostgreSQL test is a dependency of its fixture's cleanup, so
# all of them start before the dev-stack tests (one after another, their lock), whatever their
# cost. Putting the stack tests on that level (a fixture of their own) ran the browser tests
# beside instance_scale_test, whose containers' veth links made Chromium abort a request with
# ERR_NETWORK_CHANGED: they would need a lock shared with the tests that make networks first.
set(GPUAAS_STACK_TEST_COST 1000)

# gpuaas_stack_test(NAME SCRIPT [LABELS...] [TIMEOUT s]) -> a test that runs SCRIPT SOURCE_DIR
# BUILD_DIR, which brings up a dev stack of its own with tools/gpuaas on free ports
# (tests/devstack/stack_lib.sh). Every such test takes the `devstack` lock: ctest runs two tests
# at once, and two stacks choosing free ports at the same moment (or one choosing a port another
# has just freed between its `down` and `up`) would collide.
function(gpuaas_stack_test name script)
  cmake_parse_arguments(ARG "" "TIMEOUT" "LABELS" ${ARGN})
  add_test(NAME ${name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/${script} ${PROJECT_SOURCE_DIR}
                                ${PROJECT_BINARY_DIR})
  set_tests_properties(${name} PROPERTIES RESOURCE_LOCK devstack LABELS "${ARG_LABELS}"
                       TIMEOUT ${ARG_TIMEOUT} COST ${GPUAAS_STACK_TEST_COST})
endfunction()

# google/api/annotations.proto and http.proto (google.api.http, the REST mapping of RPCs), from
# Debian's golang-github-grpc-ecosystem-grpc-gateway-dev.
set(GPUAAS_GOOGLEAPIS_ROOT
    /usr/share/gocode/src/github.com/grpc-ecosystem/grpc-gateway/third_party/googleapis)

# gpuaas_proto_library(NAME PROTOS... [DEPS...] [GRPC] [ROOT dir] [INCLUDES dir...]) ->
# generated code in its own target. Protos are named relative to ROOT (default proto/), so imports
# read "gpuaas/auth/v1/auth.proto". INCLUDES are the ROOTs of other libraries' protos that these
# import (e.g. GPUAAS_GOOGLEAPIS_ROOT for google/api/annotations.proto); list those libraries in
# DEPS too.
function(gpuaas_proto_library name)
  cmake_parse_arguments(ARG "GRPC" "ROOT" "PROTOS;DEPS;INCLUDES" ${ARGN})
  if(NOT ARG_ROOT)
    set(ARG_ROOT ${PROJECT_SOURCE_DIR}/proto)
  endif()
  set(out ${PROJECT_BINARY_DIR}/proto)
  set(srcs)
  foreach(proto ${ARG_PROTOS})
    get_filename_component(dir ${proto} DIRECTORY)
    get_filename_component(stem ${proto} NAME_WE)
    set(generated ${out}/${dir}/${stem}.pb.cc ${out}/${dir}/${stem}.pb.h)
    set(plugin_args)
    if(ARG_GRPC)
      list(APPEND generated ${out}/${dir}/${stem}.grpc.pb.cc ${out}/${dir}/${stem}.grpc.pb.h)
      set(plugin_args --grpc_out=${out} --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin>)
    endif()
    set(include_args)
    foreach(dir ${ARG_INCLUDES})
      list(APPEND include_args -I ${dir})
    endforeach()
    add_custom_command(
      OUTPUT ${generated}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out}
      COMMAND protobuf::protoc --cpp_out=${out} ${plugin_args}
              -I ${ARG_ROOT} ${include_args} -I /usr/include ${proto}
      DEPENDS ${ARG_ROOT}/${proto} protobuf::protoc
      WORKING_DIRECTORY ${ARG_ROOT}
      COMMENT "protoc ${proto}")
    list(APPEND srcs ${generated})
  endforeach()
  add_library(gpuaas_${name} STATIC ${srcs})
  add_library(gpuaas::${name} ALIAS gpuaas_${name})
  target_include_directories(gpuaas_${name} PUBLIC ${out})
  target_link_libraries(gpuaas_${name} PUBLIC protobuf::libprotobuf gRPC::grpc++ ${ARG_DEPS})
endfunction()

# gpuaas_migrations(NAME <target> FUNCTION <ns::Function> FILES <NNNN_name.sql>...)
#   -> static library gpuaas::<target> defining `std::span<const gpuaas::db::Migration> ns::Function()`
#   over the files, ordered by version; pass the result to gpuaas::db::Migrate. The service
#   declares the function in its own header. Regenerated whenever an .sql file changes.
function(gpuaas_migrations)
  cmake_parse_arguments(ARG "" "NAME;FUNCTION" "FILES" ${ARGN})
  if(NOT ARG_NAME OR NOT ARG_FUNCTION)
    message(FATAL_ERROR "gpuaas_migrations: NAME and FUNCTION are required")
  endif()
  set(files)
  foreach(file ${ARG_FILES})
    get_filename_component(abs ${file} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    get_filename_component(base ${abs} NAME)
    if(NOT base MATCHES "^[0-9]+_[A-Za-z0-9_]+\\.sql$")
      message(FATAL_ERROR "gpuaas_migrations(${ARG_NAME}): ${file}: name must look like NNNN_name.sql")
    endif()
    list(APPEND files ${abs})
  endforeach()
  list(JOIN files "|" joined)
  set(script ${PROJECT_SOURCE_DIR}/libs/db/embed_migrations.cmake)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}.cc)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${out} -DFUNCTION=${ARG_FUNCTION} -DFILES=${joined}
            -P ${script}
    DEPENDS ${files} ${script}
    COMMENT "Embedding migrations for ${ARG_FUNCTION}"
    VERBATIM)
  add_library(gpuaas_${ARG_NAME} STATIC ${out})
  add_library(gpuaas::${ARG_NAME} ALIAS gpuaas_${ARG_NAME})
  target_include_directories(gpuaas_${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(gpuaas_${ARG_NAME} PRIVATE ${GPUAAS_WARNINGS})
  target_link_libraries(gpuaas_${ARG_NAME} PUBLIC gpuaas::db)
endfunction()
