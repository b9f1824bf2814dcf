// The polyhedral model of a kernel, in one struct (after PPCG's ppcg_scop): iteration
// domains, access relations, dependences and the schedule tree, all as isl objects.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <isl/cpp.h>

#include "lower/tensor_graph.h"
#include "target/target.h"

namespace akg {

enum class StatementRole { Assign, ReduceInit, ReduceUpdate };

struct PolyStatement {
    std::string name; // S0, S1, ... (isl tuple name)
    const Stage *stage = nullptr;
    StatementRole role = StatementRole::Assign;
    int out_dims = 0;    // i0..: the stage's output dimensions
    int reduce_dims = 0; // r0..: ReduceUpdate only

    // The space of its instances, S<k>[i0.., r0..].
    isl_space *space(isl_ctx *ctx) const {
        return isl_space_set_tuple_name(isl_space_set_alloc(ctx, 0, out_dims + reduce_dims), isl_dim_set, name.c_str());
    }
    // How many instances it has.
    int64_t iterations() const { return element_count(stage->shape) * (reduce_dims ? element_count(stage->reduce_extents) : 1); }
};

struct BufferInfo {
    std::string name; // in0, out1, t2
    Shape shape;
    DType dtype;      // storage dtype
    BufferKind kind;
    // Set by memory promotion: the buffer lives in a per-iteration local array of the
    // parallel loop instead of a kernel-wide scratch allocation.
    bool promoted = false;
    Shape local_shape;
    std::vector<std::string> local_offset_c; // per dimension, a C expression in the loop iterators
    // Set by stream-outputs: a kernel output written with non-temporal stores.
    bool streamed = false;
    // Set by stream-outputs: a float16 output whose rows are too short to stream by vector
    // blocks; where stage-float16 stages it as long runs, the copy-out streams them.
    bool streamed_when_staged = false;
    // Set by stage-float16: a float16 output whose box per parallel iteration is too large to
    // stage; the emitter stores each vector loop's block of it to a float array and converts
    // the block right after the loop (akg_f32_to_f16_n), as it streams streamed outputs.
    bool converted_per_block = false;
    // Set by prefetch-streams: a large input of a kernel that mostly reads, prefetched ahead of
    // the first lane reduction that streams through it.
    bool prefetched_ahead = false;
    // Set by prefetch-streams: such an input larger than the last-level cache, also prefetched
    // by column sums that walk it in whole rows.
    bool prefetched_in_rows = false;
    // From the stage (materialize): a value stored in one pass over a row and read by the next.
    bool saved_for_later_passes = false;
};

// Set by stage-float16: a float16 kernel tensor that one iteration of a parallel loop reads
// (or only writes) as a box is converted once per iteration between its float16 storage and a
// float array (hardware conversions), instead of element by element in every loop that uses it.
struct Float16Staging {
    std::string buffer;                // in0, out2
    bool output = false;               // false: copied in before the body; true: copied out after
    Shape box;                         // extent of the local float array, per dimension
    std::vector<std::string> offset_c; // per dimension, a C expression in the loop iterators
    bool contiguous = false;           // the box is one run of the tensor, always inside it
    bool streamed = false;             // copied out with non-temporal stores (akg_stream_f32_to_f16_n)
};

// Set by prefetch-rows: one iteration of a parallel loop reads a long run of a kernel input in
// several passes (a log-softmax over a vocabulary row: max, sum of exponentials, output). The
// first pass waits on memory; the later ones hit the cache, and during them the memory is idle
// and the hardware prefetchers do not reach the next row. The second pass over the run
// prefetches the next iteration's run into L2, spread over its block loop.
struct RowPrefetch {
    std::string buffer;                     // in0
    Shape box;                              // the run, per dimension (one run of the tensor)
    std::vector<std::string> next_offset_c; // per dimension, the next iteration's offset, in the loop iterators
};

// Set by tile-transposes: a statement that reads its source across (the source's innermost
// dimension is not the output's: NHWC -> NCHW), run by tiles. Within a tile, r is the tile's
// row (the dimension innermost in the output) and c its column (innermost in the source).
// A copy is run by the emitter as transposes (akg_transpose): out[c * output_column_stride + r]
// = source[r * source_row_stride + c]. A statement that computes (a bias added on the way) has
// its source's tile transposed into a local array of tile_rows x tile_columns first
// (`staged`), then runs over the tile's columns and, in a vector loop, its rows, reading the
// source from the array: the source's read has the row's index at position row_arg and the
// column's at column_arg.
struct TransposeTile {
    std::string source; // in0
    std::vector<Halide::Expr> source_args; // the indices of the statement's read of the source
    int64_t source_row_stride = 0;
    int64_t output_column_stride = 0; // copies
    bool staged = false;
    int row_arg = -1, column_arg = -1;
    int64_t tile_rows = 0, tile_columns = 0;
};

// Set by plan-reductions, per update statement of a reduction: how its nest accumulates. The
// emitter reads it (emit_accumulation, emit_lane_reduction); a tuner may set it.
struct ReductionPlan {
    // Between loop levels: the value's type, double for long float sums, unsigned 32 bits for
    // int32 sums and products (they wrap).
    Halide::Type accumulator;
    // The innermost loop's explicit lanes: their type (float for a float sum whose lanes each
    // add fewer than ScheduleOptions::double_lanes_from_terms terms, else the accumulator's)
    // and how many per block (the same for every update of one nest).
    Halide::Type lane;
    int lanes = 0;
    // > 0: a float sum in double lanes adds this many whole blocks in float lanes at a time,
    // then the float lanes into the double ones.
    int float_lane_blocks = 0;
    // > 0: a reduction of the whole kernel, run as this many ranges in parallel and combined
    // in order.
    int chunks = 0;
};

// Set by plan-contraction (plan_contraction.h): how the GEMM path runs a MatMul/BatchMatMul.
// The micro-kernel computes mr x nr tiles (kernellib's akg_gemm_micro); panels follow the
// analytical model of Low et al. (2016): a kc x nr micro-panel of B stays in L1 while the
// ir loop streams mr x kc micro-panels of A through it, an mc x kc block of A stays in L2,
// and a K x nc panel of B in the last-level cache.
struct GemmBlocking {
    int mr = 0, nr = 0;
    int64_t kc = 0, mc = 0, nc = 0;
};

// How the products are shared out to threads: whole batch elements, slices of rows (each packs
// all of B), panels of nc columns (each packs its own part of B), or not at all.
enum class GemmSplit { None, Batch, Rows, Columns };

// The part after a GEMM that works row by row on its product (a softmax over the keys, a
// LayerNorm over the hidden axis: KernelPart::row_part), run on each micro-panel of mr rows as
// soon as the tiles of its block of rows are done, while they are in cache. Product values that
// only it reads are kept in a per-thread block of mc rows instead of a whole tensor. The driver
// proposes it (run_parts) and plan-contraction takes it when one panel of k and one of columns
// hold the rows.
struct RowEpilogue {
    struct Arg {
        std::string buffer; // one of the GEMM part's own output buffers (out<k>), or ""
        int extra = -1;     // else: its index among the arguments passed after the part's own
        DType dtype = DType::Float32;
        // Elements per step of each batch index and of the row: 0 where the tensor broadcasts.
        std::vector<int64_t> row_strides;
    };
    std::vector<Arg> args;          // the row part's inputs, then its outputs
    std::set<std::string> blocked;  // out<k> buffers kept per thread, mc rows by n
    int first_extra = 0;            // the index of extra argument 0 among the part's buffers
    // The row part's functions over mr rows and over the last panel's m % mr rows.
    std::string full_rows, last_rows;
    // Decided by plan-contraction: the row part streams the outputs it never reads back
    // (non-temporal stores), whatever the kernel's size.
    bool streams_outputs = false;
};

struct ContractionPlan {
    const Stage *stage = nullptr;      // the contraction (Stage::contraction)
    std::string init, update;          // its statements
    std::vector<std::string> epilogue; // the assign statements after it, in order: run per tile
    std::vector<int64_t> batch;        // the output's batch extents (all but its last two)
    int64_t m = 0, n = 0, k = 0;
    Halide::Expr lhs, rhs;             // A(b.., i_m, r0) and B(b.., r0, i_n), in float32
    std::vector<bool> rhs_batch;       // the batch dimensions B depends on
    bool rhs_k_inner = false;          // B's innermost index is r0 (transpose_b): packed k-innermost
    // An operand read straight from a float32 tensor: element (x, k), x its row (A) or its
    // column (B), at buffer[offset + x * x_stride + k * k_stride], offset in the batch indices.
    // Packed by copies (x innermost) or register transposes (k innermost) instead of the
    // element-by-element loops of an operand with a prologue.
    struct PlainOperand {
        std::string buffer;
        Halide::Expr offset;
        int64_t x_stride = 0, k_stride = 0;
        bool f16 = false; // a float16 tensor converted to float32 (vector conversions while packing)
    };
    std::optional<PlainOperand> a_plain, b_plain;
    bool lhs_k_inner = false;          // A's innermost index is r0 (not transpose_a)
    // false: the micro-kernel reads A where it is (a plain A with k innermost), packing only a
    // last partial row panel.
    bool pack_a = true;
    // false: the micro-kernel reads B where it is (a plain B with its columns innermost, small M),
    // packing only a last partial micro-panel of columns.
    bool pack_b = true;
    // B can be packed ahead of time, once for many runs (plan_contraction.cpp's
    // b_packable_ahead); prepacked_b: this kernel reads it so packed, every micro-panel of all
    // of k one after the other (ScheduleOptions::prepacked_b), and has no PackB statements.
    bool b_packable = false;
    bool prepacked_b = false;
    // B read in place is larger than L2 and comes from memory: the micro-kernel prefetches its
    // rows ahead (they are B's row stride apart, which the hardware prefetchers do not follow).
    bool b_streamed = false;
    // Packed B's panel is larger than half of L2, so each column's first tile would wait on its
    // micro-panel coming from L3 or memory: every tile of a column prefetches its share of the
    // next column's micro-panel into L2 while it computes (akg_gemm_next_panel).
    bool b_next_prefetched = false;
    // One block of rows (all of a thread's rows fit L2), one panel of k, and B a run of memory
    // per micro-panel (a transposed B, its rows all of k): each micro-panel of B is read by one
    // column of tiles only, so a panel of them packed ahead buys no reuse. B is packed a
    // micro-panel at a time instead, right before the column of tiles that reads it, into one
    // micro-panel's buffer that stays in L1 and L2; and every tile of a column prefetches its
    // share of the next micro-panel's source into L2, so that packing reads it from there
    // instead of waiting on memory (akg_gemm_next_panel).
    bool b_packed_per_column = false;
    // Slices of rows, one panel of all the columns, B the same for every slice: a thread that
    // runs several slices in turn (fewer threads than slices) packs B for its first one only,
    // the packed panel then being the same.
    bool b_shared_by_slices = false;
    // A bias gradient beside a weight gradient: a ReduceSum of B over k that the part holds
    // (kernel_parts.cpp). B's packing sums each micro-panel it copies into `output`; the
    // reduction's statements are left out of the schedule.
    struct ColumnSum {
        std::string output;                  // the float32 kernel output of the n sums
        std::vector<std::string> statements; // the reduction's and the copy's to `output`
    };
    std::optional<ColumnSum> column_sum;
    // An epilogue statement that stores the tile's values elsewhere (split or merge heads: a
    // transpose, a reshape): it reads them through a bijection between its instances and the
    // product's elements, and runs for each element of the tile where that element is stored.
    struct PermutedStore {
        isl::map to_product;   // its instance S[y] -> the init statement's instance at the element it reads
        Halide::Expr value;    // its value, in the product's index variables
        Halide::Expr offset;   // where it stores, in its buffer, in the product's index variables
        // The offsets of a tile row's elements are consecutive, so each row is one run.
        bool rows_contiguous = false;
        // > 0: the rows of every tile are this far apart (merged heads: the model's width).
        int64_t tile_row_stride = 0;
    };
    std::map<std::string, PermutedStore> permuted; // by statement, a subset of `epilogue`
    std::optional<RowEpilogue> row_epilogue;
    // Reads of the epilogue that walk the product's rows and columns (a residual): the hardware
    // prefetchers do not follow a tile's short runs on mr rows, so the emitter prefetches each
    // tile's lines of them (prefetch_line_floats apart): before its micro-kernel call, or, with
    // lines_in_k_loop, spread over the micro-kernel's k loop (akg_gemm_lines).
    std::vector<Halide::Expr> tile_prefetches;
    int64_t prefetch_line_floats = 16;
    // A long k loop over packed A: requested together before it, a tile's lines fill the core's
    // miss buffers and it waits; spread over the loop, they arrive while it computes. A short
    // loop leaves them no time, and A in place leaves the loop no registers for them.
    bool lines_in_k_loop = false;
    // The float32 outputs the epilogue stores at the product's elements with ordinary stores:
    // each line would wait on being read for ownership after the k loop, so the emitter
    // prefetches the tile's lines of them with the reads above (stream-outputs drops the
    // outputs it streams).
    std::vector<std::string> tile_write_prefetches;
    // The epilogue rounds to float16 (a float16 product, a float16 op chain) and the target
    // converts float16 in vector instructions: the emitter computes the tile's values one
    // rounded op at a time into tile-sized arrays and rounds each array with the conversions,
    // instead of one loop whose every rounding is a chain of dependent integer operations.
    bool staged_float16_epilogue = false;
    GemmBlocking blocking;
    GemmSplit split = GemmSplit::None;
    int64_t slice_rows = 0; // Rows: rows per slice, a multiple of mr
    int slices = 1;
    int64_t k_panels = 1;   // > 1: tiles accumulate in memory between panels of kc
    // The float32 output the micro-kernel may store full tiles to directly: the product itself,
    // or a copy of it, is the only value stored ("" when an epilogue computes the stored values).
    // A permuted copy (direct_permuted, its statement) is stored there from its offset at each
    // tile's origin, with its tile_row_stride between rows.
    std::string direct_output, direct_permuted;

    int64_t m_tiles() const { return (m + blocking.mr - 1) / blocking.mr; }
    int64_t n_tiles() const { return (n + blocking.nr - 1) / blocking.nr; }
    int64_t n_panels() const { return (n + blocking.nc - 1) / blocking.nc; }
};

struct PolyModel {
    mutable isl::ctx ctx{nullptr};
    std::vector<PolyStatement> statements;
    std::vector<BufferInfo> buffers;
    isl::union_set domain;
    isl::union_map reads;
    isl::union_map writes;
    isl::union_map original_schedule; // program order: statement k before k+1, loops lexicographic
    isl::union_map dep_flow;  // read after write
    isl::union_map dep_false; // write after read, write after write
    isl::union_map dep_input; // same iteration of equal domains: proximity only (fusion)
    // Set by join-reductions: elementwise statements that it moved into a reduction's loops. The
    // emitter stores them from the reduction's lane loops.
    std::set<std::string> side_statements;
    // Those of them whose values the reduction reads (a saved value, see join_reduction_inputs.h):
    // the emitter stores them before the update in each iteration.
    std::set<std::string> feeding_side_statements;
    // Set by parallelize: statements of outermost nests too small for a parallel region
    // (ScheduleOptions::serial_accesses). Their nests keep the parallel mark, so that the
    // passes after it shape them as any other, and the emitter runs them on the calling thread.
    std::set<std::string> serial_statements;
    isl::schedule schedule;   // the schedule tree, transformed by the passes
    // Set by schedule: which candidate was taken and why, in order (shown by --dump-after=schedule).
    std::vector<std::string> schedule_notes;
    // Indexed by a parallel mark's mark::Parallel::body_plans (see stage_float16.h).
    std::vector<std::vector<Float16Staging>> float16_stagings;
    // Indexed by the same K (prefetch-rows keeps both vectors the same length).
    std::vector<std::vector<RowPrefetch>> row_prefetches;
    // Set by group-rows: the sums over short rows that the emitter computes 16 rows at a time
    // (akg_row_sums_*), by statement name. Their input is read by that call, not staged.
    std::set<std::string> grouped_row_sums;
    // Set by sink-columns: the statements below its blocks of columns. vectorize keeps a block's
    // loop over its columns one vector loop (not strip-mined), so that the emitter's column sums
    // find the block's columns in one loop below each row.
    std::set<std::string> column_block_statements;
    // Set by tile-transposes, by statement name.
    std::map<std::string, TransposeTile> transpose_tiles;
    // Set by plan-reductions, by update statement name.
    std::map<std::string, ReductionPlan> reduction_plans;
    // Set by plan-contraction for a part of a kernel with a MatMul (kernel_parts.h).
    std::optional<ContractionPlan> contraction;
    // Set by plan-reductions: the rows per block of column sums into double accumulators, each
    // block summed into float partials first (ScheduleOptions::column_sum_block_rows).
    int64_t column_sum_block_rows = 0;
    // Set by plan-reductions: the accumulator elements per parallel task of the in-order sum of
    // row chunks' sums (ScheduleOptions::chunk_sums_block).
    int64_t chunk_sums_block = 0;

    const PolyStatement &statement(const std::string &name) const;
    BufferInfo &buffer(const std::string &name);
    const BufferInfo &buffer(const std::string &name) const;
    // The float16 read a float16 stage only copies (a transpose, a reshape: out = float(in)),
    // or null. Such a stage is emitted as a copy of the bits, with no conversion either way.
    const Halide::Internal::Call *float16_copy_source(const Stage &s) const;
    // The same for any stage that copies the bits of one element of a buffer of its own dtype
    // (float16, float32, int32: out = in), or null.
    const Halide::Internal::Call *copy_source(const Stage &s) const;
};

// Scheduling choices, kept as data so that targets and tuning can change them without touching
// the passes. for_target derives the machine-dependent ones from a target description; the
// others are tuned defaults. The choices made per kernel by a cost model are fused vs unfused
// (compute_schedule) and streamed stores (stream_outputs).
struct ScheduleOptions {
    // The machine the kernel is scheduled for; every machine fact below comes from it.
    const Target *target = &default_target();
    static ScheduleOptions for_target(const Target &target);

    // A GEMM's B input comes packed (akg_pack_input's layout) instead of as a tensor.
    bool prepacked_b = false;
    int vector_width = 16;          // float32 lanes of the target's vectors
    int64_t cache_line_bytes = 64;  // the unit of streamed stores and of whole-line runs
    int threads = 2;                // the cores parallel loops are shared out to
    // Bytes of each side of one transposed tile (tile-transposes), half of L1: the 49 rows x 256
    // columns of a float16 NHWC -> NCHW tile (25 KB) ran at 0.204 ms, 112 columns 0.210, 32
    // columns 0.241 (1 thread, [32, 49, 2048]).
    int64_t transpose_tile_bytes = 16 * 1024;
    // Rows longer than this (half of L1) keep the core busy on their own and are not paired
    // (pair-rows: a log-softmax over 21128 columns).
    int64_t paired_row_max_bytes = 16 * 1024;
    // A block of NCHW channels covers up to this many bytes per image (interleave-channels), half
    // of L2. Longer contiguous runs keep the prefetchers going: summing [32, 256, 56, 56] float16
    // NCHW, 1 thread, ran at 32 GB/s with 16-channel blocks (98 KB per image), 43 GB/s with 32,
    // 44 GB/s with 64, and 48 GB/s reading the whole tensor in order.
    int64_t channel_block_bytes = 512 * 1024;
    // Row runs below this (twice L1) stay in L1 between passes or the hardware prefetchers keep up
    // with them: prefetch-rows leaves them alone.
    int64_t prefetch_rows_from_bytes = 64 * 1024;
    // Inner loops are strip-mined by vector_width * vector_unroll when long enough: GCC fully
    // unrolls 16-iteration loops before its loop vectorizer sees them.
    int vector_unroll = 4;
    // sink-columns' column blocks read at least this many bytes of each row they walk down: with
    // 128-byte rows (64 float16 columns) one core's column walk ran 1.2x slower than with 256
    // (the float16 GeLU backward's bias gradient); wider rows gained nothing (float32 dgamma) or
    // lost (512-byte float16 rows: 1.1x slower, 1 KiB: 2.3x).
    int64_t column_block_row_bytes = 256;
    // Column sums over rows of at most this many bytes, of an input of at least
    // column_sums_whole_rows_from_bytes, walk whole rows in row_chunks chunks of rows run in
    // parallel (sink_column_loops.h). NHWC BatchNorm statistics (harness, 1 / 2 threads): 256
    // float16 channels 2.45 -> 1.50 ms / 1.38 -> 0.63 ms; 512 channels 1.14 -> 1.12 / 0.52 ->
    // 0.38; a [16000, 256] float32 column sum 0.21 -> 0.17 / 0.095 -> 0.080. Wider rows keep
    // their partial sums in memory, not registers: a [16000, 512] float32 sum ran 1.8x slower
    // walked whole (1024 float16 channels 1.05x faster), so they keep blocks of columns. The
    // chunk count is fixed, not the thread count, so that the sums' order (their bits) does not
    // depend on it.
    int64_t column_sums_whole_rows_bytes = 1024;
    int64_t column_sums_whole_rows_from_bytes = int64_t{4} << 20;
    int row_chunks = 16;
    // Column sums over longer rows of such inputs run in parallel over super-blocks of this
    // many bytes of each row, and in tiles of column_sums_tile_rows rows within one (sink_column_loops.cpp,
    // tile_rows_of_column_sums): 2 KiB x 16 rows stay in L1 and in the TLB while the blocks of
    // columns walk them. A [16000, 1024] float32 sum (hand-written model, 1 / 2 threads): 14.5 /
    // 28 GB/s before; 22 / 38 with tiles of 32 rows, 24 / 44 with 16; super-blocks of 1 KiB or
    // 4 KiB did worse at 2 threads.
    int64_t column_sums_super_block_bytes = 2048;
    int64_t column_sums_tile_rows = 16;
    // Column sums over such rows whose loop over the rows walks at least this many tensors of the
    // input's size (the summed values' inputs, elementwise outputs) walk each row whole instead,
    // in chunks of rows (sink_column_loops.cpp, walk_wide_rows); 0 never.
    int column_sums_row_streams = 3;
    int64_t parallel_chunk = 4096;  // iterations per parallel task of a one-dimensional loop
    // plan-reductions (plan_reductions.h). The innermost loop of a reduction nest accumulates in
    // reduction_lanes explicit lanes: two vectors of floats of an AVX-512 target (four of
    // AVX2's) hide the latency of the additions. Loops of reduction_wide_lanes_from iterations
    // or more get reduction_wide_lanes: LayerNorm f16's three loops over rows of 768 (12 blocks)
    // became 1.1 to 1.2x faster, and a row of fewer than 64 elements would run the scalar loop.
    // The counts are floats per block, not vectors, so that every target sums in the same order.
    int reduction_lanes = 32;
    int reduction_wide_lanes = 64;
    int64_t reduction_wide_lanes_from = 512;
    // Long float sums (this many terms and more) accumulate in double between loop levels; the
    // innermost loop's lanes stay float unless each lane would add this many terms or more.
    int64_t double_lanes_from_terms = 1024;
    // Float sums in double lanes add each group of float_lane_blocks whole blocks in float lanes
    // first, then the float lanes into the double ones: a double addition per lane and group
    // instead of two conversions and two double additions per vector (a whole gradient's sum of
    // squares: 0.150 -> 0.121 ms), each float lane adding 32 terms, as the column sums' float
    // partials of 32 rows do.
    int float_lane_blocks = 32;
    // A reduction of the whole kernel (nothing outside it runs in parallel) whose innermost loop
    // has at least whole_reduction_split_from iterations runs as whole_reduction_chunks fixed
    // ranges reduced in parallel, then combined in order, so that the result does not depend on
    // the number of threads.
    int whole_reduction_chunks = 16;
    int64_t whole_reduction_split_from = int64_t{1} << 16;
    // Column sums (dgamma/dbeta, bias gradients) accumulate in double per column; the emitter
    // runs their rows in blocks of column_sum_block_rows, each block summing into float partials
    // per column added to the double accumulators once per block. LayerNorm's dgamma/dbeta: 0.15
    // -> 0.12 ms at 1 thread, 0.09 -> 0.075 ms at 2; GeLU's backward (each row computes, sums and
    // stores): 3.2 -> 2.8 ms at 1 thread (harness). The block's float sum adds at most this many
    // terms, as the lanes of a row reduction do.
    int64_t column_sum_block_rows = 32;
    // Chunks of rows walked whole add their sums to the accumulators in chunk order afterwards,
    // in parallel over blocks of this many accumulator elements (fewer than two blocks: on the
    // calling thread).
    int64_t chunk_sums_block = 1024;
    // Outermost loop nests of at most this much work run on the calling thread, not in a
    // parallel region: instances times the tensors each reads and writes, a transcendental call
    // counting 16 (schedule_transforms.cpp, work_below). Corpus kernels of small updates and
    // scalar preambles ran 1.1-20x faster at 2 threads (1.2 -> 0.1 us); an AddN of 131
    // [43, 43] inputs (244K accesses, 8 us), a log and an exp over 4096 elements (2.8 us
    // serial, 1.9 in parallel) and a cast of 16384 floats (2.0 / 1.5 us) need both cores.
    int64_t serial_accesses = 16384;
    int64_t staged_bytes_per_task = 8 * 1024; // float copies of float16 tensors per such task (L1)
    int64_t promotion_limit = 1 << 16; // elements of a per-iteration local buffer
    // Kernels whose input and output tensors take more bytes than this (the last-level cache of
    // the dev machine) write their outputs with non-temporal stores (stream_outputs.h).
    // Tried at 16 MiB on 2026-12-02 (the host with avx512_vp2intersect; tools/time_kernel.cpp,
    // minimum of 30, three runs each): of the 7 catalog kernels that changed, only
    // embedding_sum_f32 gained (0.33 -> 0.27 ms at 1 thread, 0.16 -> 0.13 at 2); the others lost
    // up to 1.7x (softmax_grad_f16, clip_by_global_norm_f32 and layernorm_bwd_dx_f32 at 2 threads).
    int64_t stream_outputs_above_bytes = int64_t{32} << 20;
    // Kernels larger than this also stream the outputs they read back where they wrote them
    // (from the block: Adam's moments) and the inputs they update in place without reading
    // them. Corpus optimizer updates of 75-500 MB ran 1.1-1.5x faster at 1 thread, 1.0-2.2x at
    // 2; kernels of 34-50 MB (above the cache, but partly kept in it from one run to the next)
    // 1.0-1.3x faster at 1 thread but 0.7-0.85x at 2.
    int64_t stream_read_back_above_bytes = int64_t{64} << 20;
    // Smaller outputs are never streamed: per-channel statistics next to a large tensor cost
    // nothing to read for ownership.
    int64_t stream_min_output_bytes = int64_t{1} << 20;
    // false: outputs that would stream keep ordinary stores (a GEMM's row part, a slice of rows
    // at a time); float16 ones are still converted a block at a time.
    bool non_temporal_stores = true;
    // Inputs this large (a quarter of that cache) of kernels that mostly read are prefetched in
    // software ahead of their lane reductions (prefetch_streams.h).
    int64_t prefetch_streams_from_bytes = int64_t{8} << 20;
    // Inputs this large (the cache) are also prefetched by column sums over whole rows.
    int64_t prefetch_row_streams_from_bytes = int64_t{32} << 20;
    bool fuse = true;               // false: one loop nest per statement (the ablation)
    bool parallel = true;
};

PolyModel build_poly_model(isl_ctx *ctx, const TensorGraph &graph);
// A Halide index expression as isl quasi-affine expression text, or "" when it is not quasi-affine.
std::string to_isl(const Halide::Expr &e);
void compute_dependences(PolyModel &model);
void compute_schedule(PolyModel &model, const ScheduleOptions &options);

} // namespace akg
