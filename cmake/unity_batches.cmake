# Unity builds that ccache can share between checkouts.
#
# Each target's .cc files compile in batches of AEVATAR_UNITY_BATCH_SIZE, so
# the heavy headers (nlohmann/json, gtest, Abseil) are parsed once a batch
# instead of once a file: on 2 cores the cold CI build is most of its time
# budget. CMake's own unity files #include each source by absolute path, and
# ccache hashes a file's text, so a fresh clone elsewhere (as CI makes) would
# miss the cache on every batch; these batch files name their sources
# relative to themselves, the same text in any checkout.
#
# Left alone: a target with the AEVATAR_NO_UNITY property (the freestanding
# sandbox init) and a source with its own COMPILE_OPTIONS or
# COMPILE_DEFINITIONS. File-local names must be unique within a target.

set(AEVATAR_UNITY_BATCH_SIZE 16)

function(aevatar_unity_batches_for target)
  get_target_property(type ${target} TYPE)
  if(NOT type MATCHES "^(STATIC_LIBRARY|EXECUTABLE)$")
    return()
  endif()
  get_target_property(skip ${target} AEVATAR_NO_UNITY)
  if(skip)
    return()
  endif()
  get_target_property(source_dir ${target} SOURCE_DIR)
  get_target_property(sources ${target} SOURCES)
  set(batch_dir ${CMAKE_BINARY_DIR}/unity/${target})
  set(kept "")
  set(batches "")
  set(text "")
  set(count 0)
  foreach(source IN LISTS sources)
    get_filename_component(path ${source} ABSOLUTE BASE_DIR ${source_dir})
    get_source_file_property(options ${path} DIRECTORY ${source_dir} COMPILE_OPTIONS)
    get_source_file_property(defines ${path} DIRECTORY ${source_dir} COMPILE_DEFINITIONS)
    if(NOT path MATCHES "\\.cc$" OR options OR defines)
      list(APPEND kept ${source})
      continue()
    endif()
    file(RELATIVE_PATH relative ${batch_dir} ${path})
    string(APPEND text "#include \"${relative}\"\n")
    math(EXPR count "${count} + 1")
    if(count EQUAL AEVATAR_UNITY_BATCH_SIZE)
      list(LENGTH batches index)
      file(GENERATE OUTPUT ${batch_dir}/batch_${index}.cc CONTENT "${text}")
      list(APPEND batches ${batch_dir}/batch_${index}.cc)
      set(text "")
      set(count 0)
    endif()
  endforeach()
  if(count GREATER 0)
    list(LENGTH batches index)
    file(GENERATE OUTPUT ${batch_dir}/batch_${index}.cc CONTENT "${text}")
    list(APPEND batches ${batch_dir}/batch_${index}.cc)
  endif()
  set_property(TARGET ${target} PROPERTY SOURCES ${kept} ${batches})
endfunction()

# Every target defined in `dir` and below.
function(aevatar_unity_batches dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    aevatar_unity_batches_for(${target})
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    aevatar_unity_batches(${subdir})
  endforeach()
endfunction()
