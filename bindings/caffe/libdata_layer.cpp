// LibDataLayer: see libdata_layer.hpp. Built as libdata_caffe_layer.so, whose static
// registration (REGISTER_LAYER_CLASS) adds the type "LibData" to Caffe's layer registry when
// the library is loaded: LD_PRELOAD for the caffe tool, ctypes.CDLL(..., RTLD_GLOBAL) before
// creating a net in pycaffe, or compiled into Caffe itself.
//
// Error policy: libdata is C and reports errors as status codes plus a per-reader message; this
// layer turns every failure into LOG(FATAL) carrying that message, as Caffe's own data layers
// do. The only C++ code that C calls back into (the log callback) catches everything, so no
// C++ exception ever unwinds through libdata's frames.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/util/math_functions.hpp"
#include "libdata/libdata.h"
#include "libdata/reader.h"
#include "libdata_layer.hpp"

namespace caffe
{

extern "C" {
// libdata calls this on the caller's thread during open/next (never on a worker), so glog is
// safe here. C frames are above us: nothing may escape.
static void ld_caffe_log(void *user, int level, const char *msg)
{
    try {
        const char *name = static_cast<const char *>(user);
        // LD_LOG_ERROR text is also the reader's errmsg, which the fatal message carries.
        if (level == LD_LOG_WARN) {
            LOG(WARNING) << "libdata [" << name << "]: " << msg;
        } else if (level == LD_LOG_INFO) {
            LOG(INFO) << "libdata [" << name << "]: " << msg;
        }
    } catch (...) {
    }
}
}

// Every libdata call goes through this: a negative status is fatal, with libdata's message
// (which names the file, the sample and the reason) and the status name.
#define LD_CAFFE_CHECK(call, what)                                                                 \
    do {                                                                                           \
        int ld_caffe_rc_ = (call);                                                                 \
        if (ld_caffe_rc_ < 0) {                                                                    \
            LOG(FATAL) << "LibData layer '" << this->layer_param_.name() << "': " << (what)        \
                       << ": " << ld_reader_errmsg(reader_) << " (" << ld_strerror(ld_caffe_rc_)   \
                       << ")";                                                                     \
        }                                                                                          \
    } while (0)

namespace
{

// Under Caffe's multi-GPU training every solver runs its own net (and its own LibData layer)
// in one process, and each rank's share is cut from one permutation that must be the same on
// every rank. Solver::Init seeds each solver's RNG with random_seed + rank, so the ranks'
// own RNGs disagree; the first layer to ask draws the seed and the others reuse it.
unsigned int SharedSeed()
{
    static std::once_flag once;
    static unsigned int seed = 0;
    std::call_once(once, []() { seed = caffe_rng_rand(); });
    return seed;
}

} // namespace

template <typename Dtype> LibDataLayer<Dtype>::~LibDataLayer()
{
    ld_reader_free(reader_); // joins libdata's workers and frees the batch ring
}

template <typename Dtype> void LibDataLayer<Dtype>::Configure()
{
    const DataParameter &dp = this->layer_param_.data_param();
    const TransformationParameter &tp = this->layer_param_.transform_param();
    const bool train = this->phase_ == TRAIN;

    CHECK(dp.has_source()) << "LibData layer '" << this->layer_param_.name()
                           << "': data_param.source is required";
    CHECK_GT(dp.batch_size(), 0u) << "LibData layer '" << this->layer_param_.name()
                                  << "': data_param.batch_size must be positive";
    CHECK(!(tp.has_mean_file() && tp.mean_value_size() > 0))
        << "Cannot specify mean_file and mean_value at the same time";
    CHECK(!(tp.force_color() && tp.force_gray())) << "cannot set both force_color and force_gray";
    if (dp.rand_skip() > 0) {
        LOG(WARNING) << "LibData layer: rand_skip is ignored (libdata shuffles every epoch)";
    }
    batch_size_ = static_cast<int>(dp.batch_size());

    // The layer was compiled against <libdata/*.h> of LD_VERSION_STRING; a libdata.so of another
    // major version has another ABI (say so instead of crashing in a call).
    CHECK_EQ(ld_version_number() / 10000, static_cast<unsigned>(LD_VERSION_MAJOR))
        << "LibData layer: built for libdata " << LD_VERSION_STRING << " but the loaded "
        << "libdata is " << ld_version_string() << "; rebuild the layer against it";
    reader_ = ld_reader_create();
    CHECK(reader_ != NULL) << "LibData layer: out of memory creating the reader";
    ld_reader_set_log(reader_, ld_caffe_log, const_cast<char *>(this->layer_param_.name().c_str()));

    LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_BATCH_SIZE, batch_size_), "batch_size");
    LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_DTYPE, LD_DTYPE_F32), "dtype");
    // force_color / force_gray decode encoded images to 3 / 1 channels, as Caffe's Data layer
    // does (raw data of another channel count is refused by the reader, as Caffe would fail).
    if (tp.force_color() || tp.force_gray())
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_CHANNELS, tp.force_color() ? 3 : 1),
                       (tp.force_color() ? "force_color" : "force_gray"));
    LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_LABEL_DTYPE, LD_DTYPE_F32), "label dtype");
    LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_LAYOUT, LD_LAYOUT_NCHW), "layout");
    int rank = 0, world = 1;
    if (train) {
        // Training batches are always full (Caffe's Data layer wraps around, so nets may assume
        // the batch size); a new shuffled permutation starts each epoch.
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_DROP_LAST, 1), "drop_last");
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_ORDER, LD_ORDER_SHUFFLE), "order");
        const bool shared = Caffe::solver_count() > 1;
        unsigned int seed = shared ? SharedSeed() : caffe_rng_rand();
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_SEED, seed), "seed");
        rank = Caffe::solver_rank();
        world = Caffe::solver_count();
    } else {
        // Testing reads every sample once per pass in file order; the final batch may be short
        // (the tops are reshaped to it), so test_iter = ceil(N / batch_size) sees each sample once.
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_DROP_LAST, 0), "drop_last");
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_ORDER, LD_ORDER_SEQUENTIAL), "order");
    }
    LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_RANK, rank), "rank");
    LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_WORLD, world), "world");
    if (world > 1) {
        // Several solvers share the machine's cores.
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        long threads = cores > world ? cores / world : 1;
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_THREADS, threads), "threads");
    }
    if (dp.has_prefetch()) {
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_PREFETCH, dp.prefetch()), "data_param.prefetch");
    }

    if (tp.crop_size() > 0) {
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_CROP_W, tp.crop_size()), "crop_size");
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_CROP_H, tp.crop_size()), "crop_size");
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_RANDOM_CROP, train ? 1 : 0), "random crop");
    }
    if (tp.mirror() && train) {
        LD_CAFFE_CHECK(ld_reader_set(reader_, LD_R_MIRROR, 1), "mirror");
    }
    if (tp.has_mean_file()) {
        LD_CAFFE_CHECK(ld_reader_set_str(reader_, LD_R_MEAN_FILE, tp.mean_file().c_str()),
                       "mean_file");
    } else if (tp.mean_value_size() > 0) {
        std::vector<float> means(tp.mean_value().begin(), tp.mean_value().end());
        LD_CAFFE_CHECK(ld_reader_set_floats(reader_, LD_R_MEAN_VALUES, means.data(), means.size()),
                       "mean_value");
    }
    if (tp.scale() != 1.0f) {
        LD_CAFFE_CHECK(ld_reader_set_double(reader_, LD_R_SCALE, tp.scale()), "scale");
    }

    // libdata's message names the file.
    LD_CAFFE_CHECK(ld_reader_open(reader_, dp.source().c_str()), "cannot open data_param.source");
}

template <typename Dtype>
void LibDataLayer<Dtype>::LayerSetUp(const vector<Blob<Dtype> *> & /*bottom*/,
                                     const vector<Blob<Dtype> *> &top)
{
    Configure();
    int64_t c = 0, h = 0, w = 0, n = 0, batches = 0, mem = 0, prefetch = 0, threads = 0;
    LD_CAFFE_CHECK(ld_reader_get_info(reader_, LD_R_INFO_C, &c), "info");
    LD_CAFFE_CHECK(ld_reader_get_info(reader_, LD_R_INFO_H, &h), "info");
    LD_CAFFE_CHECK(ld_reader_get_info(reader_, LD_R_INFO_W, &w), "info");
    LD_CAFFE_CHECK(ld_reader_get_info(reader_, LD_R_INFO_EPOCH_SAMPLES, &n), "info");
    LD_CAFFE_CHECK(ld_reader_get_info(reader_, LD_R_INFO_EPOCH_BATCHES, &batches), "info");
    LD_CAFFE_CHECK(ld_reader_get_info(reader_, LD_R_INFO_MEMORY, &mem), "info");
    LD_CAFFE_CHECK(ld_reader_get_info(reader_, LD_R_INFO_PREFETCH, &prefetch), "info");
    LD_CAFFE_CHECK(ld_reader_get_info(reader_, LD_R_INFO_THREADS, &threads), "info");
    CHECK_GT(batches, 0) << "LibData layer '" << this->layer_param_.name()
                         << "': " << this->layer_param_.data_param().source()
                         << " gives this solver " << n
                         << " samples per epoch, fewer than batch_size " << batch_size_;
    LOG(INFO) << "LibData layer '" << this->layer_param_.name() << "' ("
              << (this->phase_ == TRAIN ? "TRAIN" : "TEST") << ", rank " << Caffe::solver_rank()
              << "/" << Caffe::solver_count() << "): " << this->layer_param_.data_param().source()
              << ", " << n << " samples per epoch, output " << batch_size_ << "x" << c << "x" << h
              << "x" << w << ", " << threads << " threads, prefetch " << prefetch
              << ", reader memory " << mem << " bytes (libdata " << ld_version_string() << ")";
    top[0]->Reshape(batch_size_, static_cast<int>(c), static_cast<int>(h), static_cast<int>(w));
    // segmentation masks (0 none, 1 beside the labels, 2 the label): batch x 1 x H x W, cropped
    // and mirrored with the images
    int64_t masks = 0, boxes = 0;
    LD_CAFFE_CHECK(ld_reader_get_info(reader_, LD_R_INFO_MASK, &masks), "info");
    LD_CAFFE_CHECK(ld_reader_get_info(reader_, LD_R_INFO_BOXES, &boxes), "info");
    boxes_ = boxes != 0;
    // With boxes the label top is theirs: masks, even the dataset's label, take a third top.
    mask_top_ = masks == 2 && !boxes_ ? 1 : masks ? 2 : 0;
    CHECK(top.size() < 3 || mask_top_ == 2)
        << "LibData layer '" << this->layer_param_.name() << "': a third top takes the masks, and "
        << this->layer_param_.data_param().source()
        << (masks ? " has them as its label: use two tops (data, label)" : " has no masks");
    if (top.size() > 1 && boxes_) { // SSD's AnnotatedData label blob: 1 x 1 x boxes x 8
        top[1]->Reshape(1, 1, 1, 8);
    } else if (top.size() > 1 && mask_top_ == 1) { // the masks are the label (/label (N,1,H,W))
        top[1]->Reshape(batch_size_, 1, static_cast<int>(h), static_cast<int>(w));
    } else if (top.size() > 1) { // label vectors (HDF5 /label (N, K)): batch x K, as HDF5Data
        int64_t k = 0;
        LD_CAFFE_CHECK(ld_reader_get_info(reader_, LD_R_INFO_LABEL_K, &k), "info");
        vector<int> shape(1, batch_size_);
        if (k) shape.push_back(static_cast<int>(k));
        top[1]->Reshape(shape);
    }
    if (top.size() > 2) top[2]->Reshape(batch_size_, 1, static_cast<int>(h), static_cast<int>(w));
}

template <typename Dtype> const ld_batch *LibDataLayer<Dtype>::NextBatch()
{
    const ld_batch *b = NULL;
    int rc = ld_reader_next(reader_, &b);
    if (rc == LD_END) { // the epoch is over: the next call starts the next one
        rc = ld_reader_next(reader_, &b);
    }
    LD_CAFFE_CHECK(rc, "reading " + this->layer_param_.data_param().source());
    CHECK_EQ(rc, static_cast<int>(LD_OK)) << "LibData layer: an epoch with no batch";
    return b;
}

template <typename Dtype> static void CopyToDtype(const float *src, size_t n, Dtype *dst)
{
    for (size_t i = 0; i < n; ++i)
        dst[i] = static_cast<Dtype>(src[i]);
}

template <> void CopyToDtype<float>(const float *src, size_t n, float *dst)
{
    std::memcpy(dst, src, n * sizeof(float));
}

// The data top of a float net borrows the reader's batch buffer instead of copying it: one
// batch less memory and no memcpy per iteration (as Caffe's own prefetching layers lend their
// prefetch buffers). This is safe because the net is done with the blob, forward and backward,
// before this layer's next Forward, which is the only place that calls ld_reader_next() and so
// lets the reader recycle the buffer; the blob never frees memory it does not own. A layer
// working in place on "data" writes into the borrowed buffer, which the reader does not read
// back. Double nets convert, so they copy.
template <typename Dtype> static void SetData(Blob<Dtype> *top, const float *data)
{
    CopyToDtype(data, static_cast<size_t>(top->count()), top->mutable_cpu_data());
}

template <> void SetData<float>(Blob<float> *top, const float *data)
{
    top->set_cpu_data(const_cast<float *>(data));
}

// The batch's boxes as SSD's AnnotatedDataLayer gives them: one row of 8 per box, [item,
// label, instance, x1, y1, x2, y2, difficult], corners normalised to 0..1 by the output size,
// label = the box class index + 1 (SSD's class 0 is the background). As SSD's converters
// (weiliu89/caffe, src/caffe/util/io.cpp) define the other two: instance numbers the item's
// boxes of one class (0, 1, ... per class, not per image), and difficult is 1 for VOC's
// difficult boxes and for COCO's crowd boxes (SSD stores iscrowd as difficult, so that
// use_difficult_gt: false and the evaluation skip them). A batch without boxes gives one row
// of -1, as SSD's layer does (its GetGroundTruth skips item -1).
template <typename Dtype> void LibDataLayer<Dtype>::SetBoxes(const ld_batch *b, Blob<Dtype> *top)
{
    const int m = static_cast<int>(b->n_boxes);
    top->Reshape(1, 1, m > 0 ? m : 1, 8);
    Dtype *d = top->mutable_cpu_data();
    if (m == 0) {
        for (int k = 0; k < 8; ++k)
            d[k] = Dtype(-1);
        return;
    }
    for (size_t j = 0; j < b->n; ++j) {
        const uint64_t first = b->box_offsets[j];
        for (uint64_t k = first; k < b->box_offsets[j + 1]; ++k, d += 8) {
            const float *xy = b->boxes + 4 * k;
            int instance = 0; // the item's earlier boxes of this class (an image has few)
            for (uint64_t i = first; i < k; ++i)
                instance += b->box_labels[i] == b->box_labels[k];
            d[0] = static_cast<Dtype>(j);
            d[1] = static_cast<Dtype>(b->box_labels[k] + 1);
            d[2] = static_cast<Dtype>(instance);
            d[3] = static_cast<Dtype>(xy[0] / b->w);
            d[4] = static_cast<Dtype>(xy[1] / b->h);
            d[5] = static_cast<Dtype>(xy[2] / b->w);
            d[6] = static_cast<Dtype>(xy[3] / b->h);
            // box_flags: 1 crowd, 2 difficult (reader.h)
            d[7] = static_cast<Dtype>((b->box_flags[k] & 3) != 0);
        }
    }
}

template <typename Dtype>
void LibDataLayer<Dtype>::Forward_cpu(const vector<Blob<Dtype> *> & /*bottom*/,
                                      const vector<Blob<Dtype> *> &top)
{
    const ld_batch *b = NextBatch();
    CHECK_EQ(b->dtype, static_cast<int>(LD_DTYPE_F32));
    CHECK_EQ(b->label_dtype, static_cast<int>(LD_DTYPE_F32));
    CHECK_EQ(b->layout, static_cast<int>(LD_LAYOUT_NCHW));
    const int n = static_cast<int>(b->n);
    top[0]->Reshape(n, b->c, b->h, b->w);
    const size_t count = static_cast<size_t>(top[0]->count());
    CHECK_EQ(count * sizeof(float), b->data_bytes);
    SetData(top[0], static_cast<const float *>(b->data));
    if (top.size() > 1 && boxes_) {
        SetBoxes(b, top[1]);
    } else if (top.size() > 1 && mask_top_ != 1) {
        vector<int> shape(1, n);
        if (b->label_k) shape.push_back(b->label_k);
        top[1]->Reshape(shape);
        CopyToDtype(static_cast<const float *>(b->labels), static_cast<size_t>(top[1]->count()),
                    top[1]->mutable_cpu_data());
    }
    if (mask_top_ && static_cast<int>(top.size()) > mask_top_) { // class indices as Dtype
        Blob<Dtype> *m = top[mask_top_];
        m->Reshape(n, 1, b->mask_h, b->mask_w);
        Dtype *dst = m->mutable_cpu_data();
        const size_t count_m = static_cast<size_t>(m->count());
        const uint16_t *wide = reinterpret_cast<const uint16_t *>(b->masks); // uint16 masks
        for (size_t i = 0; i < count_m; ++i)
            dst[i] = static_cast<Dtype>(b->mask_dtype == LD_DTYPE_U16 ? wide[i] : b->masks[i]);
    }
}

INSTANTIATE_CLASS(LibDataLayer);
REGISTER_LAYER_CLASS(LibData);

} // namespace caffe
