"""Re-exports of the native proto rules under rules_proto's public names."""

proto_lang_toolchain = native.proto_lang_toolchain
proto_library = native.proto_library
