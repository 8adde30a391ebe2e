// One compute unit running its share of a launch, cycle by cycle of issue: the event loop of
// hk.perf.simulate (its docstring says what the unit does; this file is how, fast enough for a
// search that predicts hundreds of candidates). Events are ordered by (time, sequence number),
// so a run is deterministic; the arithmetic is plain double arithmetic in the order written
// (built without FP contraction), so a figure does not depend on the host's compiler flags.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <queue>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// The instruction classes, in hk.perf.instructions' order (simulate.py checks CLASSES against it).
enum Class : int {
  SALU, VALU, TRANS, MATRIX, LDS, LOAD, STORE, COPY, SMEM, WAIT, BARRIER, BRANCH, END, NOP, FREE, NCLASSES
};
const char* const CLASS_NAMES[NCLASSES] = {"salu", "valu",    "trans",  "matrix", "lds", "load", "store", "copy",
                                           "smem", "wait", "barrier", "branch", "end",    "nop", "free"};
// The counters a wait names: vector memory, vector stores, LDS with scalar memory.
enum Counter { VM, VS, LGKM, NCOUNTERS };

struct Unit {
  int simds;
  double issue_interval, valu_cycles, trans_cycles;
  bool matrix_on_valu;
  double lds_scale, lds_latency, lds_write_bytes, lines_per_cycle, line_bytes, l2_latency, dram_latency,
      miss_cycles, l2_bytes_per_cycle, smem_latency, barrier_cycles, workgroup_cycles;
  bool stores_on_vm;
};

// One dynamic instruction of a wave: its class, the profile's two figures (bytes; bytes, LDS
// cycles or cache lines) and the table's (matrix or nop cycles, wait counts).
struct Inst {
  int cls;
  int64_t a, b;
  double cost;
  std::array<int32_t, NCOUNTERS> waits;
};

using Stream = std::vector<Inst>;
using Program = std::vector<Stream>;  // a workgroup: its waves' streams

struct Wave {
  const Stream* stream;
  size_t pc;
  int simd, slot;
  std::array<std::vector<double>, NCOUNTERS> pending;  // completion times, per counter
};

// A workgroup slot of the unit: its waves still running, those waiting at a barrier.
struct Slot {
  int left = 0;
  std::vector<int> waiting;
};

struct Event {
  double t;
  uint64_t seq;
  int wave;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct Result {
  double finish = 0, valu = 0, matrix = 0, lds = 0, memory_pipe = 0, missed_lines = 0;
  int64_t instructions = 0, workgroups = 0;
};

class Simulation {
 public:
  Simulation(const Unit& u, const std::vector<Program>& programs, int64_t count, int resident, double hit,
             double distinct_reads, double distinct_writes)
      : u_(u), programs_(programs), count_(count), hit_(hit), distinct_{distinct_reads, distinct_writes},
        ports_(u.simds), valu_free_(u.simds, 0.0), matrix_free_(u.simds, 0.0), valu_busy_(u.simds, 0.0),
        matrix_busy_(u.simds, 0.0), slots_(resident) {
    for (auto& p : ports_) p.fill(0.0);
    for (int s = 0; s < resident; ++s) free_slots_.push_back(s);
  }

  Result run() {
    const double miss = 1.0 - hit_;
    const double latency = hit_ * u_.l2_latency + miss * u_.dram_latency;
    for (size_t k = 0; k < slots_.size(); ++k) start(0.0);
    while (!heap_.empty()) {
      const Event e = heap_.top();
      heap_.pop();
      const double t = e.t;
      Wave& w = waves_[e.wave];
      const Inst& in = (*w.stream)[w.pc];
      const int c = in.cls, s = w.simd;
      auto& port = ports_[s];
      // The issue slot of this class on this SIMD (and, RDNA, the SIMD's one issue per cycle).
      double issue = std::max(t, port[c]);
      if (c == VALU || c == TRANS || (c == MATRIX && u_.matrix_on_valu)) issue = std::max(issue, valu_free_[s]);
      if (c == MATRIX) issue = std::max(issue, matrix_free_[s]);
      if (issue > t) {
        push(issue, e.wave);
        continue;
      }
      port[c] = t + u_.issue_interval;
      w.pc += 1;
      r_.instructions += 1;
      double ready = t + u_.issue_interval;
      switch (c) {
        case VALU:
        case TRANS: {
          const double cost = c == VALU ? u_.valu_cycles : u_.trans_cycles;
          valu_free_[s] = t + cost;
          valu_busy_[s] += cost;
          break;
        }
        case MATRIX:
          matrix_free_[s] = t + in.cost;
          matrix_busy_[s] += in.cost;
          if (u_.matrix_on_valu) valu_free_[s] = t + in.cost;
          break;
        case LDS: {
          const double cycles = std::max(1.0, double(in.b) * u_.lds_scale);
          const double begin = std::max(t, lds_free_);
          lds_free_ = begin + cycles;
          r_.lds += cycles;
          w.pending[LGKM].push_back(begin + cycles + u_.lds_latency);
          break;
        }
        case LOAD:
        case STORE:
        case COPY: {
          const double lines = double(std::max<int64_t>(1, in.b));
          const bool store = c == STORE;
          const double begin = std::max(t, mem_free_);
          mem_free_ = begin + lines / u_.lines_per_cycle;
          r_.memory_pipe += lines / u_.lines_per_cycle;
          const double fresh = lines * distinct_[store ? 1 : 0];
          l2_free_ = std::max(l2_free_, begin) + fresh * u_.line_bytes / u_.l2_bytes_per_cycle;
          const double missed = fresh * (store ? 1.0 : miss);
          dram_free_ = std::max(dram_free_, begin) + missed * u_.miss_cycles;
          r_.missed_lines += missed;
          const double done = std::max(std::max(begin + (store ? u_.l2_latency : latency), l2_free_),
                                       store ? 0.0 : dram_free_);
          w.pending[store && !u_.stores_on_vm ? VS : VM].push_back(done);
          if (c == COPY) {
            // A global->LDS copy writes its bytes into the LDS when they arrive.
            const double cycles = double(in.a) / u_.lds_write_bytes;
            lds_free_ = std::max(lds_free_, done - cycles) + cycles;
            r_.lds += cycles;
          }
          break;
        }
        case SMEM:
          w.pending[LGKM].push_back(t + u_.smem_latency);
          break;
        case WAIT: {
          double until = t;
          for (int q = 0; q < NCOUNTERS; ++q) {
            const int32_t n = in.waits[q];
            auto& pending = w.pending[q];
            if (n < 0 || pending.size() <= size_t(n)) continue;
            std::sort(pending.begin(), pending.end());
            const size_t k = pending.size() - size_t(n);
            until = std::max(until, pending[k - 1]);
            pending.erase(pending.begin(), pending.begin() + std::ptrdiff_t(k));
          }
          ready = std::max(ready, until);
          break;
        }
        case NOP:
          ready = t + in.cost;
          break;
        case BARRIER: {
          Slot& slot = slots_[w.slot];
          slot.waiting.push_back(e.wave);
          if (int(slot.waiting.size()) >= slot.left) release(slot, t);  // else the last to arrive releases it
          continue;
        }
        case END: {
          Slot& slot = slots_[w.slot];
          slot.left -= 1;
          r_.finish = std::max(r_.finish, t);
          const int free_slot = w.slot;
          retire(e.wave);
          if (slot.left == 0) {
            free_slots_.push_back(free_slot);
            start(t);
          } else if (!slot.waiting.empty() && int(slot.waiting.size()) >= slot.left) {
            // The waves still alive all wait at a barrier the finished one will never reach.
            release(slot, t);
          }
          continue;
        }
        default:
          break;
      }
      push(ready, e.wave);
    }
    r_.valu = *std::max_element(valu_busy_.begin(), valu_busy_.end());
    r_.matrix = *std::max_element(matrix_busy_.begin(), matrix_busy_.end());
    r_.workgroups = next_;
    return r_;
  }

 private:
  void push(double t, int wave) { heap_.push(Event{t, seq_++, wave}); }

  // Starts the next workgroup in a free slot, if there are both.
  void start(double t) {
    if (next_ >= count_ || free_slots_.empty()) return;
    const int slot = free_slots_.front();
    free_slots_.pop_front();
    const Program& program = programs_[size_t(next_ % int64_t(programs_.size()))];
    next_ += 1;
    const int n = int(program.size());
    slots_[slot].left = n;
    slots_[slot].waiting.clear();
    for (int k = 0; k < n; ++k) {
      const int id = take_wave();
      Wave& w = waves_[id];
      w.stream = &program[k];
      w.pc = 0;
      w.simd = (slot * n + k) % u_.simds;
      w.slot = slot;
      for (auto& q : w.pending) q.clear();
      push(t + u_.workgroup_cycles, id);
    }
  }

  void release(Slot& slot, double t) {
    const double at = t + u_.barrier_cycles;
    for (int id : slot.waiting) push(at, id);
    slot.waiting.clear();
  }

  int take_wave() {
    if (!spare_.empty()) {
      const int id = spare_.back();
      spare_.pop_back();
      return id;
    }
    waves_.emplace_back();
    return int(waves_.size()) - 1;
  }

  void retire(int id) { spare_.push_back(id); }

  const Unit u_;
  const std::vector<Program>& programs_;
  const int64_t count_;
  const double hit_;
  const double distinct_[2];
  std::vector<std::array<double, NCLASSES>> ports_;  // per SIMD, per class: the next free issue slot
  std::vector<double> valu_free_, matrix_free_, valu_busy_, matrix_busy_;
  double lds_free_ = 0, mem_free_ = 0, dram_free_ = 0, l2_free_ = 0;
  std::vector<Slot> slots_;
  std::deque<int> free_slots_;
  std::deque<Wave> waves_;
  std::vector<int> spare_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap_;
  uint64_t seq_ = 0;
  int64_t next_ = 0;
  Result r_;
};

template <typename T>
T field(const py::dict& unit, const char* name) {
  if (!unit.contains(name)) throw py::value_error(std::string("the unit has no field ") + name);
  return unit[name].cast<T>();
}

Unit make_unit(const py::dict& d) {
  Unit u;
  u.simds = field<int>(d, "simds");
  u.issue_interval = field<double>(d, "issue_interval");
  u.valu_cycles = field<double>(d, "valu_cycles");
  u.trans_cycles = field<double>(d, "trans_cycles");
  u.matrix_on_valu = field<bool>(d, "matrix_on_valu");
  u.lds_scale = field<double>(d, "lds_scale");
  u.lds_latency = field<double>(d, "lds_latency");
  u.lds_write_bytes = field<double>(d, "lds_write_bytes");
  u.lines_per_cycle = field<double>(d, "lines_per_cycle");
  u.line_bytes = field<double>(d, "line_bytes");
  u.l2_latency = field<double>(d, "l2_latency");
  u.dram_latency = field<double>(d, "dram_latency");
  u.miss_cycles = field<double>(d, "miss_cycles");
  u.l2_bytes_per_cycle = field<double>(d, "l2_bytes_per_cycle");
  u.smem_latency = field<double>(d, "smem_latency");
  u.barrier_cycles = field<double>(d, "barrier_cycles");
  u.workgroup_cycles = field<double>(d, "workgroup_cycles");
  u.stores_on_vm = field<bool>(d, "stores_on_vm");
  if (u.simds < 1) throw py::value_error("a unit has at least one SIMD");
  return u;
}

using Ints = py::array_t<int32_t, py::array::c_style | py::array::forcecast>;
using Doubles = py::array_t<double, py::array::c_style | py::array::forcecast>;
using Classes = py::array_t<int8_t, py::array::c_style | py::array::forcecast>;

// A profiled wave's (n, 3) stream of (instruction index, bytes, bytes or cycles or lines) as the
// simulation's instructions, through the code object's table.
Stream make_stream(const Ints& stream, const Classes& cls, const Doubles& cycles, const Ints& waits) {
  if (stream.ndim() != 2 || stream.shape(1) != 3) throw py::value_error("a wave's stream is an (n, 3) array");
  const auto s = stream.unchecked<2>();
  const auto c = cls.unchecked<1>();
  const auto y = cycles.unchecked<1>();
  const auto w = waits.unchecked<2>();
  const py::ssize_t n = c.shape(0);
  Stream out(size_t(s.shape(0)));
  for (py::ssize_t i = 0; i < s.shape(0); ++i) {
    const int32_t idx = s(i, 0);
    if (idx < 0 || idx >= n)
      throw py::value_error("a stream names instruction " + std::to_string(idx) + " of a table of " +
                            std::to_string(n));
    Inst& in = out[size_t(i)];
    in.cls = c(idx);
    if (in.cls < 0 || in.cls >= NCLASSES) throw py::value_error("an instruction class out of range");
    in.a = s(i, 1);
    in.b = s(i, 2);
    in.cost = y(idx);
    for (int q = 0; q < NCOUNTERS; ++q) in.waits[size_t(q)] = w(idx, q);
  }
  // A wave that ran to its end ends with s_endpgm; the loop relies on it (a wave past its last
  // instruction has nothing to issue, and a barrier would release it into nothing).
  if (out.empty() || out.back().cls != END) throw py::value_error("a wave's stream does not end with s_endpgm");
  return out;
}

py::tuple run(const py::dict& unit_fields, const Classes& cls, const Doubles& cycles, const Ints& waits,
              const py::list& programs, int64_t count, int resident, double hit, py::tuple distinct) {
  const Unit unit = make_unit(unit_fields);
  if (cycles.ndim() != 1 || cls.ndim() != 1 || cycles.shape(0) != cls.shape(0) || waits.ndim() != 2 ||
      waits.shape(0) != cls.shape(0) || waits.shape(1) != NCOUNTERS)
    throw py::value_error("the table's class, cycle and wait arrays disagree in shape");
  if (programs.empty() && count > 0) throw py::value_error("no workgroup programs to run");
  if (resident < 1) throw py::value_error("a unit holds at least one workgroup");
  std::vector<Program> progs;
  for (const auto& p : programs) {
    Program prog;
    for (const auto& s : p.cast<py::list>()) {
      prog.push_back(make_stream(s.cast<Ints>(), cls, cycles, waits));
    }
    if (prog.empty()) throw py::value_error("a workgroup has no waves");
    progs.push_back(std::move(prog));
  }
  const double reads = distinct[0].cast<double>(), writes = distinct[1].cast<double>();
  // Slots beyond the workgroups are never taken: the same run without allocating them.
  resident = int(std::max<int64_t>(1, std::min<int64_t>(resident, count)));
  Result r;
  {
    py::gil_scoped_release unlocked;
    r = Simulation(unit, progs, count, resident, hit, reads, writes).run();
  }
  py::dict busy;
  busy["valu"] = r.valu;
  busy["matrix"] = r.matrix;
  busy["lds"] = r.lds;
  busy["memory pipe"] = r.memory_pipe;
  busy["memory beyond the L2"] = r.missed_lines * unit.miss_cycles;
  return py::make_tuple(r.finish, busy, r.instructions, r.missed_lines, r.workgroups);
}

}  // namespace

PYBIND11_MODULE(_simulate, mod) {
  mod.doc() = "hk.perf.simulate's event loop (see hk/perf/simulate.py for the Python API).";
  py::list names;
  for (const char* name : CLASS_NAMES) names.append(name);
  mod.attr("CLASSES") = py::tuple(names);
  mod.def("run", &run, py::arg("unit"), py::arg("cls"), py::arg("cycles"), py::arg("waits"), py::arg("programs"),
          py::arg("count"), py::arg("resident"), py::arg("hit"), py::arg("distinct"));
}
