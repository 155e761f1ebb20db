# Embeds a text file (a kernel, the default config) into the binary as a byte array, so the
# binary needs no data files at run time. Generates <symbol>.cpp defining
#   extern const unsigned char <symbol>[];  extern const unsigned long long <symbol>_size;
function(gpucheck_embed_text target symbol input)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/embedded/${symbol}.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${out} -DSYMBOL=${symbol}
            -P ${PROJECT_SOURCE_DIR}/cmake/GpucheckEmbedScript.cmake
    DEPENDS ${input} ${PROJECT_SOURCE_DIR}/cmake/GpucheckEmbedScript.cmake
    COMMENT "Embedding ${input}")
  target_sources(${target} PRIVATE ${out})
endfunction()
