# Writes driftless-cli's man page and shell completions from its own help text:
#   cmake -DCLI=path/to/driftless-cli -DOUT=folder -P generatedocs.cmake
file(MAKE_DIRECTORY "${OUT}")
foreach(spec "driftless-cli.1|help;--man" "driftless-cli.bash|completion;bash" "_driftless-cli|completion;zsh")
  string(REPLACE "|" ";" parts "${spec}")
  list(POP_FRONT parts file)
  set(args ${parts})
  execute_process(COMMAND "${CLI}" ${args} OUTPUT_FILE "${OUT}/${file}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "driftless-cli ${args} failed (${rc})")
  endif()
endforeach()
# Installed compressed, as Debian policy wants manual pages.
execute_process(COMMAND gzip -9nf -k "${OUT}/driftless-cli.1" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip of driftless-cli.1 failed (${rc})")
endif()
