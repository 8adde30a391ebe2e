//===- ToCpp.cpp - hk kernels as C++ on the hk tile library ---------------===//
//
// One C++ statement per operation, in program order, against hk/include. Two traps are closed
// here: after every wait the tiles it completes are bound with a volatile asm (hk::bind), so
// no instruction that reads them can be scheduled above the wait; and on targets with
// asynchronous global->LDS copies every copy is followed by its vmcnt wait before the next
// barrier.
//
//===----------------------------------------------------------------------===//

#include "KernelWriter.h"
#include "hk/HKPasses.h"
#include "hk/Translation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace mlir::hk;
using namespace mlir::hk::detail;

std::string KernelWriter::literal(TypedAttr value) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (auto f = dyn_cast<FloatAttr>(value)) {
    APFloat v = f.getValue();
    if (v.isInfinity())
      os << (v.isNegative() ? "-INFINITY" : "INFINITY");
    else if (v.isNaN())
      os << "NAN";
    else {
      bool lost;
      v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      os << llvm::formatv("{0:e9}", v.convertToDouble()).str();
      if (f.getType().isF32())
        os << "f";
    }
  } else if (auto i = dyn_cast<IntegerAttr>(value)) {
    if (i.getType().isSignlessInteger(1))
      os << (i.getValue().isZero() ? "false" : "true");
    else
      os << i.getValue().getSExtValue();
  }
  return out;
}

LogicalResult KernelWriter::scalarResult(Operation *op, StringRef expr) {
  auto type = e.typeName(op->getResult(0).getType(), op->getLoc());
  if (failed(type))
    return failure();
  e.line() << "const " << *type << " " << n(op->getResult(0)) << " = " << expr << ";\n";
  return success();
}

LogicalResult KernelWriter::writeKernel(func::FuncOp kernel) {
  e.warps = getKernelWarps(kernel);
  e.assignVectorTiles(kernel);
  int64_t threads = e.warps * e.facts.waveSize;
  auto lds = kernel->getAttrOfType<IntegerAttr>("hk.lds_bytes");
  auto vgprs = kernel->getAttrOfType<IntegerAttr>("hk.tile_vgprs");
  e.os << "// kernel " << kernel.getSymName() << ": " << e.warps << " warp(s), " << threads
       << " threads, " << (lds ? lds.getInt() : 0) << " bytes of LDS";
  if (vgprs)
    e.os << ", register tiles peak at " << vgprs.getInt() << " VGPRs";
  e.os << "\n";
  std::string attributes = "__launch_bounds__(" + std::to_string(threads) + ")";
  // A kernel's max_vgprs is a limit for the compiler too: as a VGPR count, and as the occupancy
  // it implies, which the backend honours (it spills beyond it; the resource gate then refuses
  // the build).
  if (auto cap = kernel->getAttrOfType<IntegerAttr>("hk.max_vgprs")) {
    int64_t granule = e.facts.vgprGranule;
    int64_t allocated = std::max<int64_t>(granule, (cap.getInt() + granule - 1) / granule * granule);
    int64_t waves = std::min(e.facts.maxWavesPerSimd, e.facts.vgprsPerSimd / allocated);
    attributes += " __attribute__((amdgpu_num_vgpr(" + std::to_string(cap.getInt()) +
                  "), amdgpu_waves_per_eu(" + std::to_string(std::max<int64_t>(1, waves)) + ")))";
  }
  std::string params;
  for (auto [i, arg] : llvm::enumerate(kernel.getArguments())) {
    auto type = e.typeName(arg.getType(), kernel.getLoc());
    if (failed(type))
      return failure();
    if (isa<RegisterTileType, RegisterVectorType, SharedTileType, SharedVectorType>(arg.getType()))
      return kernel.emitError() << "kernel parameter " << i << " has type " << arg.getType()
                                << "; kernels take global views and scalars only";
    params += (i ? ", " : "") + *type + " " + n(arg);
  }
  // The C++ name is prefixed so that no kernel name can collide with a C library function
  // (`random`, `exp`, ...); the asm label keeps the kernel's own name as its symbol.
  std::string cname = "hk_kernel_" + kernel.getSymName().str();
  e.os << "extern \"C\" __global__ void " << attributes << "\n"
       << cname << "(" << params << ") __asm__(\"" << kernel.getSymName() << "\");\n";
  e.os << "extern \"C\" __global__ void " << attributes << "\n"
       << cname << "(" << params << ") {\n";
  if (lds && lds.getInt() > 0)
    e.line() << "__shared__ __attribute__((aligned(16))) unsigned char hk_lds[" << lds.getInt()
             << "];\n";
  if (failed(writeBlock(kernel.getBody().front())))
    return failure();
  e.os << "}\n";
  return success();
}

LogicalResult KernelWriter::writeBlock(Block &block) {
  for (Operation &op : block)
    if (failed(writeOp(&op)))
      return failure();
  return success();
}

LogicalResult KernelWriter::assignAll(ValueRange targets, ValueRange values) {
  // Through temporaries, so that a swap of loop-carried values reads the old ones.
  SmallVector<std::string> temps;
  for (auto [target, value] : llvm::zip(targets, values)) {
    auto type = e.valueTypeName(value, value.getLoc());
    if (failed(type))
      return failure();
    std::string temp = n(target) + "_next";
    e.line() << *type << " " << temp << " = " << n(value) << ";\n";
    temps.push_back(temp);
  }
  for (auto [target, temp] : llvm::zip(targets, temps))
    e.line() << n(target) << " = " << temp << ";\n";
  return success();
}

LogicalResult KernelWriter::writeOp(Operation *op) {
  if (isa<func::ReturnOp>(op)) {
    e.line() << "return;\n";
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return writeFor(loop);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return writeIf(ifOp);
  if (auto loop = dyn_cast<scf::WhileOp>(op))
    return writeWhile(loop);
  if (isa<scf::YieldOp, scf::ConditionOp>(op))
    return success(); // written by the parent
  if (op->getDialect() && op->getDialect()->getNamespace() == "arith")
    return writeArith(op);
  if (isa<HKDialect>(op->getDialect()))
    return writeHK(op);
  return op->emitError() << "hk-to-cpp cannot translate '" << op->getName() << "'";
}

/// The loop's body, then its carried values updated from what it yields.
LogicalResult KernelWriter::writeIteration(scf::ForOp loop) {
  if (failed(writeBlock(*loop.getBody())))
    return failure();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  return assignAll(loop.getRegionIterArgs(), yield.getOperands());
}

/// One iteration with the induction variable bound to `iv`, in a scope of its own (an unrolled
/// loop writes the body several times).
LogicalResult KernelWriter::writeLoopBody(scf::ForOp loop, StringRef iv) {
  e.line() << "{\n";
  e.indent++;
  e.line() << "const int " << n(loop.getInductionVar()) << " = " << iv << ";\n";
  if (failed(writeIteration(loop)))
    return failure();
  e.indent--;
  e.line() << "}\n";
  return success();
}

LogicalResult KernelWriter::writeFor(scf::ForOp loop) {
  for (auto [init, arg, result] :
       llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(), loop.getResults())) {
    auto type = e.valueTypeName(arg, loop.getLoc());
    if (failed(type))
      return failure();
    e.line() << *type << " " << n(arg) << " = " << n(init) << ";\n";
    e.alias(result, arg);
  }
  int64_t unroll = 1;
  if (auto attr = loop->getAttrOfType<IntegerAttr>(kUnrollAttr))
    unroll = attr.getInt();
  std::string iv = n(loop.getInductionVar());
  std::string lb = n(loop.getLowerBound()), ub = n(loop.getUpperBound()), step = n(loop.getStep());
  if (unroll == 1) {
    e.line() << "for (int " << iv << " = " << lb << "; " << iv << " < " << ub << "; " << iv
             << " += " << step << ") {\n";
    e.indent++;
    if (failed(writeIteration(loop)))
      return failure();
    e.indent--;
    e.line() << "}\n";
    return success();
  }
  // The body `unroll` times per iteration, then the iterations left: in the unrolled copies the
  // compiler knows `k % unroll` of each, so LDS buffer indices become constants.
  std::string k = iv + "_k";
  e.line() << "int " << k << " = " << lb << ";\n";
  e.line() << "for (; " << k << " + " << unroll - 1 << " * " << step << " < " << ub << "; " << k
           << " += " << unroll << " * " << step << ") {\n";
  e.indent++;
  for (int64_t i = 0; i < unroll; ++i)
    if (failed(writeLoopBody(loop, k + " + " + std::to_string(i) + " * " + step)))
      return failure();
  e.indent--;
  e.line() << "}\n";
  e.line() << "for (; " << k << " < " << ub << "; " << k << " += " << step << ") {\n";
  e.indent++;
  if (failed(writeLoopBody(loop, k)))
    return failure();
  e.indent--;
  e.line() << "}\n";
  return success();
}

LogicalResult KernelWriter::writeIf(scf::IfOp ifOp) {
  for (Value result : ifOp.getResults())
    if (failed(e.declare(result, ifOp.getLoc())))
      return failure();
  bool pending = e.asyncCopyPending;
  e.line() << "if (" << n(ifOp.getCondition()) << ") {\n";
  for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
    if (region->empty())
      continue;
    if (region == &ifOp.getElseRegion())
      e.line() << "} else {\n";
    e.indent++;
    if (failed(writeBlock(region->front())))
      return failure();
    auto yield = cast<scf::YieldOp>(region->front().getTerminator());
    for (auto [result, value] : llvm::zip(ifOp.getResults(), yield.getOperands()))
      e.line() << n(result) << " = " << n(value) << ";\n";
    e.indent--;
    pending |= e.asyncCopyPending;
  }
  e.line() << "}\n";
  e.asyncCopyPending = pending;
  return success();
}

LogicalResult KernelWriter::writeWhile(scf::WhileOp loop) {
  for (auto [init, arg] : llvm::zip(loop.getInits(), loop.getBeforeArguments())) {
    auto type = e.valueTypeName(arg, loop.getLoc());
    if (failed(type))
      return failure();
    e.line() << *type << " " << n(arg) << " = " << n(init) << ";\n";
  }
  for (Value result : loop.getResults())
    if (failed(e.declare(result, loop.getLoc())))
      return failure();
  e.line() << "while (true) {\n";
  e.indent++;
  if (failed(writeBlock(loop.getBefore().front())))
    return failure();
  scf::ConditionOp cond = loop.getConditionOp();
  e.line() << "if (!" << n(cond.getCondition()) << ") {\n";
  e.indent++;
  for (auto [result, value] : llvm::zip(loop.getResults(), cond.getArgs()))
    e.line() << n(result) << " = " << n(value) << ";\n";
  e.line() << "break;\n";
  e.indent--;
  e.line() << "}\n";
  for (auto [arg, value] : llvm::zip(loop.getAfterArguments(), cond.getArgs())) {
    auto type = e.valueTypeName(arg, loop.getLoc());
    if (failed(type))
      return failure();
    e.line() << *type << " " << n(arg) << " = " << n(value) << ";\n";
  }
  if (failed(writeBlock(loop.getAfter().front())))
    return failure();
  auto yield = cast<scf::YieldOp>(loop.getAfter().front().getTerminator());
  if (failed(assignAll(loop.getBeforeArguments(), yield.getOperands())))
    return failure();
  e.indent--;
  e.line() << "}\n";
  return success();
}

LogicalResult KernelWriter::writeArith(Operation *op) {
  auto bin = [&](StringRef sym) {
    return scalarResult(op, n(op->getOperand(0)) + " " + sym.str() + " " + n(op->getOperand(1)));
  };
  auto call = [&](StringRef fn) {
    std::string args;
    for (Value v : op->getOperands())
      args += (args.empty() ? "" : ", ") + n(v);
    return scalarResult(op, fn.str() + "(" + args + ")");
  };
  auto cast = [&]() {
    auto type = e.typeName(op->getResult(0).getType(), op->getLoc());
    if (failed(type))
      return failure();
    return scalarResult(op, "static_cast<" + *type + ">(" + n(op->getOperand(0)) + ")");
  };
  // Integer scalars wrap and divide with defined results everywhere (hk/common/ints.cuh); other
  // widths (i1) keep C++'s operators, which are defined on them.
  bool int32 = op->getNumResults() == 1 &&
               (op->getResult(0).getType().isIndex() || op->getResult(0).getType().isSignlessInteger(32));
  auto intOr = [&](StringRef fn, StringRef sym) { return int32 ? call(fn) : bin(sym); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::ConstantOp c) -> LogicalResult {
        auto value = dyn_cast<TypedAttr>(c.getValue());
        if (!value || (!isa<FloatAttr>(value) && !isa<IntegerAttr>(value)))
          return c.emitError() << "hk-to-cpp translates scalar constants only, not " << c.getValue();
        return scalarResult(op, literal(value));
      })
      .Case<arith::AddFOp>([&](auto) -> LogicalResult { return bin("+"); })
      .Case<arith::SubFOp>([&](auto) -> LogicalResult { return bin("-"); })
      .Case<arith::MulFOp>([&](auto) -> LogicalResult { return bin("*"); })
      .Case<arith::DivFOp>([&](auto) -> LogicalResult { return bin("/"); })
      .Case<arith::AddIOp>([&](auto) -> LogicalResult { return intOr("hk::wrap_add", "+"); })
      .Case<arith::SubIOp>([&](auto) -> LogicalResult { return intOr("hk::wrap_sub", "-"); })
      .Case<arith::MulIOp>([&](auto) -> LogicalResult { return intOr("hk::wrap_mul", "*"); })
      .Case<arith::DivSIOp>([&](auto) -> LogicalResult { return intOr("hk::div_s", "/"); })
      .Case<arith::RemSIOp>([&](auto) -> LogicalResult { return intOr("hk::rem_s", "%"); })
      .Case<arith::AndIOp>([&](auto) -> LogicalResult { return bin("&"); })
      .Case<arith::OrIOp>([&](auto) -> LogicalResult { return bin("|"); })
      .Case<arith::XOrIOp>([&](auto) -> LogicalResult { return bin("^"); })
      .Case<arith::ShLIOp>([&](auto) -> LogicalResult { return intOr("hk::shl_s", "<<"); })
      .Case<arith::ShRSIOp>([&](auto) -> LogicalResult { return intOr("hk::shr_s", ">>"); })
      .Case<arith::DivUIOp>([&](auto) -> LogicalResult {
        return scalarResult(op, "static_cast<unsigned>(" + n(op->getOperand(0)) +
                                    ") / static_cast<unsigned>(" + n(op->getOperand(1)) + ")");
      })
      .Case<arith::RemUIOp>([&](auto) -> LogicalResult {
        return scalarResult(op, "static_cast<unsigned>(" + n(op->getOperand(0)) +
                                    ") % static_cast<unsigned>(" + n(op->getOperand(1)) + ")");
      })
      .Case<arith::CeilDivSIOp>([&](auto) -> LogicalResult { return call("hk::ceil_div_s"); })
      .Case<arith::MaxSIOp, arith::MaximumFOp, arith::MaxNumFOp>([&](auto) -> LogicalResult { return call("max"); })
      .Case<arith::MinSIOp, arith::MinimumFOp, arith::MinNumFOp>([&](auto) -> LogicalResult { return call("min"); })
      .Case<arith::NegFOp>([&](auto) -> LogicalResult { return scalarResult(op, "-" + n(op->getOperand(0))); })
      .Case<arith::SelectOp>([&](arith::SelectOp s) -> LogicalResult {
        return scalarResult(op, n(s.getCondition()) + " ? " + n(s.getTrueValue()) + " : " +
                                    n(s.getFalseValue()));
      })
      .Case<arith::CmpIOp>([&](arith::CmpIOp c) -> LogicalResult {
        static const char *syms[] = {"==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">="};
        return bin(syms[static_cast<int>(c.getPredicate())]);
      })
      .Case<arith::CmpFOp>([&](arith::CmpFOp c) -> LogicalResult {
        // C++'s comparisons are ordered (false with NaN) except !=, which is unordered (true with
        // NaN); the other unordered predicates negate the opposite ordered comparison.
        std::string lhs = n(c.getLhs()), rhs = n(c.getRhs());
        std::string lessOrGreater = lhs + " < " + rhs + " || " + lhs + " > " + rhs;
        auto notOf = [&](StringRef sym) { return scalarResult(op, "!(" + lhs + " " + sym.str() + " " + rhs + ")"); };
        switch (c.getPredicate()) {
        case arith::CmpFPredicate::OEQ:
          return bin("==");
        case arith::CmpFPredicate::UNE:
          return bin("!=");
        case arith::CmpFPredicate::OLT:
          return bin("<");
        case arith::CmpFPredicate::OLE:
          return bin("<=");
        case arith::CmpFPredicate::OGT:
          return bin(">");
        case arith::CmpFPredicate::OGE:
          return bin(">=");
        case arith::CmpFPredicate::ONE:
          return scalarResult(op, "(" + lessOrGreater + ")");
        case arith::CmpFPredicate::UEQ:
          return scalarResult(op, "!(" + lessOrGreater + ")");
        case arith::CmpFPredicate::ULT:
          return notOf(">=");
        case arith::CmpFPredicate::ULE:
          return notOf(">");
        case arith::CmpFPredicate::UGT:
          return notOf("<=");
        case arith::CmpFPredicate::UGE:
          return notOf("<");
        default:
          return c.emitError() << "hk-to-cpp cannot translate predicate "
                               << arith::stringifyCmpFPredicate(c.getPredicate());
        }
      })
      .Case<arith::FPToSIOp>([&](auto) -> LogicalResult {
        // Saturating, NaN -> 0, as the tiles convert (a C++ cast is undefined out of range).
        if (!op->getResult(0).getType().isSignlessInteger(32))
          return cast();
        return scalarResult(op, "hk::float_to_int(" + n(op->getOperand(0)) + ")");
      })
      .Case<arith::IndexCastOp, arith::IndexCastUIOp, arith::SIToFPOp, arith::UIToFPOp,
            arith::FPToUIOp, arith::ExtFOp, arith::TruncFOp, arith::ExtSIOp,
            arith::ExtUIOp, arith::TruncIOp, arith::BitcastOp>([&](auto) -> LogicalResult { return cast(); })
      .Default([&](Operation *) -> LogicalResult {
        return op->emitError() << "hk-to-cpp cannot translate '" << op->getName() << "'";
      });
}


LogicalResult mlir::hk::translateToCpp(ModuleOp module, raw_ostream &os, StringRef arch) {
  std::string target = arch.str();
  if (target.empty())
    if (auto attr = module->getAttrOfType<StringAttr>(kArchAttr))
      target = attr.getValue().str();
  if (target.empty())
    target = "gfx1100";
  const TargetFacts *facts = lookupTarget(target);
  if (!facts)
    return module.emitError() << "unknown target architecture '" << target << "'; use one of "
                              << knownTargets();
  // Write into a buffer: a failure leaves `os` untouched.
  std::string text;
  llvm::raw_string_ostream buffer(text);
  buffer << "// Generated by hk-translate --hk-to-cpp for " << target
         << ". Compile with -I <hk/include>.\n"
         << "#include \"hk/hk.cuh\"\n\n";
  bool any = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!isKernel(func))
      continue;
    CppEmitter emitter(buffer, *facts);
    KernelWriter writer(emitter);
    if (failed(writer.writeKernel(func)))
      return failure();
    buffer << "\n";
    any = true;
  }
  if (!any)
    return module.emitError() << "no kernel to translate: mark a func.func with the hk.kernel attribute";
  os << text;
  return success();
}

static llvm::cl::opt<std::string> translateArch("hk-arch",
                                                llvm::cl::desc("target of --hk-to-cpp (default: "
                                                               "the module's hk.arch, else gfx1100)"),
                                                llvm::cl::init(""));

void mlir::hk::registerToCppTranslation() {
  TranslateFromMLIRRegistration registration(
      "hk-to-cpp", "translate hk kernels to C++ on the hk tile library",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError() << "hk-to-cpp translates a builtin.module";
        return translateToCpp(module, os, translateArch);
      },
      [](DialectRegistry &registry) {
        registry.insert<HKDialect, func::FuncDialect, arith::ArithDialect, scf::SCFDialect>();
      });
}
