// The generated @llvm_toolchain cc_library targets compile against MLIR 22's headers and link
// statically: parse, verify and print a module with the func dialect.
#include <cstdio>
#include <string>

#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

int main() {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect>();
  const char *source = "func.func @hk_smoke(%arg0: i32) -> i32 { return %arg0 : i32 }";
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module || mlir::failed(mlir::verify(*module))) {
    std::fprintf(stderr, "FAIL: the module did not parse or verify\n");
    return 1;
  }
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  if (printed.find("func.func @hk_smoke(%arg0: i32) -> i32") == std::string::npos) {
    std::fprintf(stderr, "FAIL: unexpected print:\n%s\n", printed.c_str());
    return 1;
  }
  std::printf("%s", printed.c_str());
  return 0;
}
