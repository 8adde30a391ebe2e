//===- WriteHKOps.cpp - hk operations as tile-library calls ---------------===//
//
// Destination-first calls, as the tile library takes them: `hk::add(dst, a, b)`.
//
//===----------------------------------------------------------------------===//

#include "KernelWriter.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::hk;
using namespace mlir::hk::detail;

static const char *dimName(Dim d) { return d == Dim::x ? "x" : d == Dim::y ? "y" : "z"; }

LogicalResult KernelWriter::writeWait(StringRef fn, int64_t count, ValueRange guarded,
                                      ArrayAttr younger, Location loc) {
  // The hardware counts instructions: the operations left in flight add up to the tile
  // library's (lower-bound) count of the instructions each issues. Without a description of
  // them the wait waits for everything.
  std::string insts;
  if (count > 0 && younger) {
    StringRef counter = fn == "wait_lds" ? "lds_insts" : "vm_insts";
    for (Attribute a : younger) {
      Type t = cast<TypeAttr>(a).getValue();
      if (auto st = dyn_cast<SharedTileType>(t))
        t = StagedTileType::get(t.getContext(), st.getElementType(), st.getRows(), st.getCols());
      auto type = e.typeName(isa<RegisterTileType>(t) ? cast<RegisterTileType>(t).withRole(Role::none) : t, loc);
      if (failed(type))
        return failure();
      insts += (insts.empty() ? "" : " + ") + ("hk::" + counter + "<" + *type + ">()").str();
    }
  }
  e.line() << "hk::" << fn << "<" << (insts.empty() ? "0" : insts) << ">();\n";
  // The bind makes every register of the completed tiles an operand of a volatile asm right
  // after the wait, so nothing that reads them can move above it.
  for (Value v : guarded)
    e.line() << "hk::bind(" << n(v) << ");\n";
  return success();
}

/// The conversion of a register tile whose only use is a store to global memory: the tile
/// library stores the source converting each element, so the converted tile (often in another
/// register pattern) is never held.
CastOp KernelWriter::storedConversion(Value v) {
  auto cast = v.getDefiningOp<CastOp>();
  if (!cast || !isa<RegisterTileType>(cast.getX().getType()) || !v.hasOneUse() ||
      !isa<StoreOp>(*v.getUsers().begin()))
    return CastOp();
  auto from = cast.getX().getType(), to = cast.getType();
  auto a = cast_or_null<RegisterTileType>(from), b = cast_or_null<RegisterTileType>(to);
  // Only a change of element type: a change of layout is a data movement of its own.
  if (!a || !b || a.getLayout() != b.getLayout())
    return CastOp();
  return cast;
}

/// Where a shared value lives: `root[buffer]`, plus the row and column offsets (empty when zero)
/// that a chain of hk.subtile views adds. Views are single-buffer, so only the buffer of the view
/// taken from the root allocation selects anything.
KernelWriter::SharedPlace KernelWriter::placeOf(Value shared, Value buffer) {
  std::string row0, col0;
  while (auto sub = shared.getDefiningOp<SubtileOp>()) {
    auto add = [](std::string &sum, std::string term) {
      sum = sum.empty() ? term : sum + " + " + term;
    };
    add(row0, n(sub.getRow()) + " * " + std::to_string(sub.getType().getRows()));
    add(col0, n(sub.getCol()) + " * " + std::to_string(sub.getType().getCols()));
    buffer = sub.getBuffer();
    shared = sub.getSrc();
  }
  return {n(shared) + "[" + n(buffer) + "]", row0, col0};
}

LogicalResult KernelWriter::writeHK(Operation *op) {
  // Register results are declared first, then filled by the call.
  auto declared = [&](Value v) { return e.declare(v, op->getLoc()); };
  auto call = [&](StringRef fn, std::initializer_list<std::string> args) {
    e.line() << "hk::" << fn << "(";
    bool first = true;
    for (const std::string &a : args) {
      e.os << (first ? "" : ", ") << a;
      first = false;
    }
    e.os << ");\n";
    return success();
  };
  auto into = [&](Value result, StringRef fn, std::initializer_list<std::string> args) {
    if (failed(declared(result)))
      return failure();
    e.line() << "hk::" << fn << "(" << n(result);
    for (const std::string &a : args)
      e.os << ", " << a;
    e.os << ");\n";
    return success();
  };
  auto indices = [&](ValueRange idx) {
    std::string out;
    for (Value v : idx)
      out += (out.empty() ? "" : ", ") + n(v);
    return out;
  };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      // Indexing.
      .Case([&](BlockIdxOp o) -> LogicalResult {
        return scalarResult(op, std::string("static_cast<int>(blockIdx.") + dimName(o.getDim()) + ")");
      })
      .Case([&](GridDimOp o) -> LogicalResult {
        return scalarResult(op, std::string("static_cast<int>(gridDim.") + dimName(o.getDim()) + ")");
      })
      .Case([&](WarpIdOp) -> LogicalResult { return scalarResult(op, "hk::warpid()"); })
      .Case([&](LaneIdOp) -> LogicalResult { return scalarResult(op, "hk::laneid()"); })
      .Case([&](NumWarpsOp) -> LogicalResult { return scalarResult(op, std::to_string(e.warps)); })
      .Case([&](ExtentOp o) -> LogicalResult {
        return scalarResult(op, n(o.getSrc()) + "." + stringifyExtent(o.getDim()).str());
      })
      .Case([&](TileCoordOp o) -> LogicalResult {
        e.line() << "const hk::coord " << n(o.getResult()) << "{" << n(o.getBatch()) << ", "
                 << n(o.getDepth()) << ", " << n(o.getRow()) << ", " << n(o.getCol()) << "};\n";
        return success();
      })
      // Global memory.
      .Case([&](LoadOp o) -> LogicalResult { return into(o.getResult(), "load", {n(o.getSrc()), n(o.getCoord())}); })
      .Case([&](StoreOp o) -> LogicalResult {
        // A conversion stored and used nowhere else converts on the way (see storedConversion).
        if (auto cast = storedConversion(o.getValue()))
          return call("store", {n(o.getDst()), n(cast.getX()), n(o.getCoord())});
        return call("store", {n(o.getDst()), n(o.getValue()), n(o.getCoord())});
      })
      // The tensor's divisor picks the tile library's path at compile time, as for copies.
      .Case([&](GatherOp o) -> LogicalResult {
        std::string fn = "gather_rows<" + std::to_string(o.getSrc().getType().getDivisor()) + ">";
        return into(o.getResult(), fn, {n(o.getSrc()), n(o.getRowIds()), n(o.getCoord())});
      })
      .Case([&](ScatterOp o) -> LogicalResult {
        std::string fn = "scatter_rows<" + std::to_string(o.getDst().getType().getDivisor()) + ">";
        return call(fn, {n(o.getDst()), n(o.getValue()), n(o.getRowIds()), n(o.getCoord())});
      })
      .Case([&](LoadScalarOp o) -> LogicalResult {
        const char *fn = o.getScalarCache() ? "hk::load_scalar_cached(" : "hk::load_scalar(";
        return scalarResult(op, fn + n(o.getSrc()) + ", " + indices(o.getIndices()) + ")");
      })
      .Case([&](StoreScalarOp o) -> LogicalResult {
        return call("store_scalar", {n(o.getDst()), indices(o.getIndices()), n(o.getValue())});
      })
      .Case([&](AtomicAddOp o) -> LogicalResult {
        return call("atomic_add", {n(o.getDst()), indices(o.getIndices()), n(o.getValue())});
      })
      // LDS.
      .Case([&](LdsAllocOp o) -> LogicalResult {
        auto offset = o.getOffset();
        if (!offset)
          return o.emitError() << "LDS allocation has no offset; run hk-lds-allocation (or "
                                  "hk-kernel-pipeline) before translating";
        auto type = e.typeName(o.getType(), op->getLoc());
        if (failed(type))
          return failure();
        int64_t bytes = isa<SharedTileType>(o.getType())
                            ? cast<SharedTileType>(o.getType()).getBufferBytes()
                            : cast<SharedVectorType>(o.getType()).getBufferBytes();
        // Buffers sit back to back; the tile library's shared types have exactly these bytes.
        e.line() << "static_assert(sizeof(" << *type << ") == " << bytes
                 << ", \"shared tile size differs from the LDS allocation's\");\n";
        e.line() << *type << "* " << n(o.getResult()) << " = reinterpret_cast<" << *type
                 << "*>(hk_lds + " << *offset << ");\n";
        return success();
      })
      // A subtile is no object of its own: loads and stores through it address its root
      // allocation at a row and column offset.
      .Case([&](SubtileOp) -> LogicalResult { return success(); })
      .Case([&](LdsLoadOp o) -> LogicalResult {
        SharedPlace p = placeOf(o.getSrc(), o.getBuffer());
        if (p.row0.empty())
          return into(o.getResult(), "load", {p.tile});
        return into(o.getResult(), "load", {p.tile, p.row0, p.col0});
      })
      .Case([&](LdsStoreOp o) -> LogicalResult {
        SharedPlace p = placeOf(o.getDst(), o.getBuffer());
        if (p.row0.empty())
          return call("store", {p.tile, n(o.getValue())});
        return call("store", {p.tile, n(o.getValue()), p.row0, p.col0});
      })
      .Case([&](CopyToLdsOp o) -> LogicalResult {
        if (o.getDst().getDefiningOp<SubtileOp>())
          return o.emitError() << "a workgroup copy into a subtile is not supported; copy the "
                                  "whole shared tile";
        e.line() << "hk::group<" << e.warps << ">::load(" << placeOf(o.getDst(), o.getBuffer()).tile
                 << ", " << n(o.getSrc()) << ", " << n(o.getCoord()) << ");\n";
        if (e.facts.asyncGlobalToLds)
          e.asyncCopyPending = true;
        return success();
      })
      // Split copies: the global view's divisor picks the tile library's path at compile time.
      .Case([&](CopyIssueOp o) -> LogicalResult {
        if (failed(declared(o.getResult())))
          return failure();
        e.line() << "hk::group<" << e.warps << ">::issue<" << o.getSrc().getType().getDivisor()
                 << ">(" << n(o.getResult()) << ", " << n(o.getSrc()) << ", " << n(o.getCoord()) << ");\n";
        return success();
      })
      .Case([&](CopyCommitOp o) -> LogicalResult {
        e.line() << "hk::group<" << e.warps << ">::" << (o.getTranspose() ? "commit_transposed(" : "commit(")
                 << placeOf(o.getDst(), o.getBuffer()).tile
                 << ", " << n(o.getValue()) << ");\n";
        return success();
      })
      .Case([&](CopyFromLdsOp o) -> LogicalResult {
        if (o.getSrc().getDefiningOp<SubtileOp>())
          return o.emitError() << "a workgroup copy out of a subtile is not supported; copy the "
                                  "whole shared tile";
        e.line() << "hk::group<" << e.warps << ">::store(" << n(o.getDst()) << ", "
                 << placeOf(o.getSrc(), o.getBuffer()).tile << ", " << n(o.getCoord()) << ");\n";
        return success();
      })
      // Waits, barriers, scheduling.
      .Case([&](WaitLdsOp o) -> LogicalResult {
        return writeWait("wait_lds", o.getCount(), o.getGuarded(), o.getYoungerAttr(), o.getLoc());
      })
      .Case([&](WaitVmOp o) -> LogicalResult {
        e.asyncCopyPending = false;
        return writeWait("wait_vm", o.getCount(), o.getGuarded(), o.getYoungerAttr(), o.getLoc());
      })
      .Case([&](BarrierOp) -> LogicalResult {
        if (e.asyncCopyPending) {
          // The DMA into LDS counts on vmcnt, which the barrier does not wait for.
          e.line() << "hk::wait_vm<0>(); // asynchronous global->LDS copy before the barrier\n";
          e.asyncCopyPending = false;
        }
        return call("barrier", {});
      })
      .Case([&](SchedBarrierOp o) -> LogicalResult {
        e.line() << "hk::sched_barrier<" << o.getMask() << ">();\n";
        return success();
      })
      .Case([&](SetPrioOp o) -> LogicalResult {
        e.line() << "hk::set_prio<" << o.getPriority() << ">();\n";
        return success();
      })
      // MMA.
      .Case([&](MmaOp o) -> LogicalResult {
        std::string fn = "mma_" + stringifyMmaKind(o.getKind()).str();
        return into(o.getResult(), fn, {n(o.getA()), n(o.getB()), n(o.getC())});
      })
      // Elementwise.
      .Case([&](UnaryOp o) -> LogicalResult { return into(o.getResult(), stringifyUnaryFn(o.getFn()), {n(o.getX())}); })
      .Case([&](BinaryOp o) -> LogicalResult {
        return into(o.getResult(), stringifyBinaryFn(o.getFn()), {n(o.getLhs()), n(o.getRhs())});
      })
      .Case([&](CmpOp o) -> LogicalResult {
        return into(o.getResult(), stringifyCmpPredicate(o.getPredicate()), {n(o.getLhs()), n(o.getRhs())});
      })
      .Case([&](SelectOp o) -> LogicalResult {
        return into(o.getResult(), "select", {n(o.getMask()), n(o.getTrueValue()), n(o.getFalseValue())});
      })
      .Case([&](BroadcastBinaryOp o) -> LogicalResult {
        std::string fn = stringifyBinaryFn(o.getFn()).str() +
                         (o.getVec().getType().getAxis() == VecAxis::col ? "_row" : "_col");
        return into(o.getResult(), fn, {n(o.getTile()), n(o.getVec())});
      })
      .Case([&](BroadcastOp o) -> LogicalResult {
        StringRef fn = o.getVec().getType().getAxis() == VecAxis::col ? "broadcast_row" : "broadcast_col";
        return into(o.getResult(), fn, {n(o.getVec())});
      })
      // Fills, masks, indices.
      .Case([&](FillOp o) -> LogicalResult {
        auto f = dyn_cast<FloatAttr>(o.getValue());
        if (f && f.getValue().isZero() && !f.getValue().isNegative())
          return into(o.getResult(), "zero", {});
        if (f && f.getValue().isInfinity() && f.getValue().isNegative())
          return into(o.getResult(), "neg_infty", {});
        return into(o.getResult(), "fill", {literal(o.getValue())});
      })
      .Case([&](MaskOp o) -> LogicalResult {
        std::string value = literal(o.getValue());
        if (o.getKind() == MaskKind::causal)
          return into(o.getResult(), "causal", {n(o.getX()), n(o.getRow0()), n(o.getCol0()), value});
        // tril keeps (col0 + j) - (row0 + i) <= diagonal: in tile coordinates, j - i <= the
        // diagonal shifted by row0 - col0.
        std::string diagonal = "(" + std::to_string(o.getDiagonal()) + " + " + n(o.getRow0()) +
                               " - " + n(o.getCol0()) + ")";
        return into(o.getResult(), stringifyMaskKind(o.getKind()), {n(o.getX()), diagonal, value});
      })
      .Case([&](IotaOp o) -> LogicalResult {
        return into(o.getResult(), o.getIndex() == TileIndex::row ? "iota_rows" : "iota_cols", {});
      })
      // Reductions, conversions, random numbers.
      .Case([&](ReduceOp o) -> LogicalResult {
        std::string fn = (o.getType().getAxis() == VecAxis::col ? "row_" : "col_") +
                         stringifyReduceFn(o.getFn()).str();
        if (o.getInit())
          return into(o.getResult(), fn, {n(o.getX()), n(o.getInit())});
        return into(o.getResult(), fn, {n(o.getX())});
      })
      .Case([&](CastOp o) -> LogicalResult {
        if (storedConversion(o.getResult()))
          return success(); // written by its store
        return into(o.getResult(), o.getFinite() ? "copy_finite" : "copy", {n(o.getX())});
      })
      .Case([&](TransposeOp o) -> LogicalResult { return into(o.getResult(), "transpose", {n(o.getX())}); })
      .Case([&](RandOp o) -> LogicalResult {
        return into(o.getResult(), "rand", {"static_cast<uint32_t>(" + n(o.getSeed()) + ")", n(o.getOffsets())});
      })
      .Default([&](Operation *) -> LogicalResult {
        return op->emitError() << "hk-to-cpp cannot translate '" << op->getName() << "'";
      });
}
