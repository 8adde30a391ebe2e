//===- HKModules.cpp - hk's native modules inside hk._mlir ----------------===//
//
// Two modules live in the same shared object as upstream MLIR's `_mlir` (so that there is one
// copy of MLIR in the process):
//   _site_initialize_0: registers hk, func, arith and scf with every new Context and hk's
//                       passes with the pass registry (upstream's site-initialization hook);
//   _hk:                runs hk-kernel-pipeline and the C++ translation, returning the
//                       diagnostics as data (severity, message, file, line, column, notes);
//                       and the hk-opt and hk-translate drivers, for the wheel's commands.
//
//===----------------------------------------------------------------------===//

#include "hk/HKDialect.h"
#include "hk/HKPasses.h"
#include "hk/Tools.h"
#include "hk/Translation.h"

#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include "mlir/CAPI/IR.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <vector>

namespace nb = nanobind;
using namespace mlir;

namespace {

/// The file:line:col a location points at (through names, call sites and fusions).
nb::object locationTuple(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return nb::make_tuple(file.getFilename().str(), file.getLine(), file.getColumn());
  if (auto name = dyn_cast<NameLoc>(loc))
    return locationTuple(name.getChildLoc());
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return locationTuple(call.getCaller());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations()) {
      nb::object t = locationTuple(inner);
      if (!t.is_none())
        return t;
    }
  return nb::none();
}

const char *severityName(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

nb::dict diagnosticDict(Diagnostic &d) {
  nb::dict out;
  out["severity"] = severityName(d.getSeverity());
  out["message"] = d.str();
  out["location"] = locationTuple(d.getLocation());
  nb::list notes;
  for (Diagnostic &note : d.getNotes())
    notes.append(diagnosticDict(note));
  out["notes"] = notes;
  return out;
}

/// Collects every diagnostic emitted while it lives, instead of printing them, and without
/// the "see current operation" dump the pass manager would attach.
struct Collector {
  explicit Collector(MLIRContext *ctx)
      : ctx(ctx), printedOp(ctx->shouldPrintOpOnDiagnostic()),
        handler(ctx, [this](Diagnostic &d) {
          diagnostics.append(diagnosticDict(d));
          return success();
        }) {
    ctx->printOpOnDiagnostic(false);
  }
  ~Collector() { ctx->printOpOnDiagnostic(printedOp); }
  MLIRContext *ctx;
  bool printedOp;
  nb::list diagnostics;
  ScopedDiagnosticHandler handler;
};

ModuleOp asModule(MlirOperation op) {
  auto module = dyn_cast<ModuleOp>(unwrap(op));
  if (!module)
    throw nb::type_error("expected a builtin.module operation");
  return module;
}

/// Runs a driver's main on `args` (args[0] is the program's name), as a process would.
int runMain(int (*main)(int, char **), std::vector<std::string> args) {
  std::vector<char *> argv;
  for (std::string &arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  return main(static_cast<int>(args.size()), argv.data());
}

} // namespace

NB_MODULE(_site_initialize_0, m) {
  m.doc() = "Registers the hk dialect and passes with every hk._mlir Context";
  hk::registerAllPasses();
  m.def("register_dialects", [](MlirDialectRegistry registry) {
    unwrap(registry)->insert<hk::HKDialect, func::FuncDialect, arith::ArithDialect,
                             scf::SCFDialect>();
  });
  // Kernels are small; a thread pool per Context costs more than it gives.
  m.attr("disable_multithreading") = true;
}

NB_MODULE(_hk, m) {
  m.doc() = "hk-kernel-pipeline and the C++ translation, with diagnostics as data";
  hk::registerAllPasses();

  m.def(
      "run_pipeline",
      [](MlirOperation op, const std::string &arch, bool strict, bool deriveWaits) {
        ModuleOp module = asModule(op);
        Collector collector(module.getContext());
        PassManager pm(module.getContext());
        hk::KernelPipelineOptions options;
        options.arch = arch;
        options.strict = strict;
        options.deriveWaits = deriveWaits;
        hk::buildKernelPipeline(pm, options);
        bool ok = succeeded(pm.run(module));
        return nb::make_tuple(ok, collector.diagnostics);
      },
      nb::arg("module"), nb::arg("arch"), nb::arg("strict") = false,
      nb::arg("derive_waits") = true,
      "Runs hk-kernel-pipeline on the module in place; returns (ok, diagnostics).");

  m.def(
      "translate_to_cpp",
      [](MlirOperation op, const std::string &arch) {
        ModuleOp module = asModule(op);
        Collector collector(module.getContext());
        std::string text;
        llvm::raw_string_ostream os(text);
        bool ok = succeeded(hk::translateToCpp(module, os, arch));
        return nb::make_tuple(ok, ok ? nb::cast(text) : nb::none(), collector.diagnostics);
      },
      nb::arg("module"), nb::arg("arch") = "",
      "Translates the module's kernels to C++; returns (ok, text or None, diagnostics).");

  m.def(
      "verify",
      [](MlirOperation op) {
        Operation *operation = unwrap(op);
        Collector collector(operation->getContext());
        bool ok = succeeded(mlir::verify(operation));
        return nb::make_tuple(ok, collector.diagnostics);
      },
      nb::arg("operation"), "Verifies the operation; returns (ok, diagnostics).");

  // The drivers parse LLVM's process-wide command-line options: run each at most once per
  // process, as the hk-opt and hk-translate commands do.
  m.def(
      "opt_main", [](std::vector<std::string> args) { return runMain(hk::optMain, std::move(args)); },
      nb::arg("argv"), "hk-opt's main on argv (argv[0] the program's name); returns the exit code.");
  m.def(
      "translate_main",
      [](std::vector<std::string> args) { return runMain(hk::translateMain, std::move(args)); },
      nb::arg("argv"), "hk-translate's main on argv; returns the exit code.");
}
