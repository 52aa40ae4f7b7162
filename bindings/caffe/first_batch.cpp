// caffe_first_batch [--train SEED] [--rows FILE] NET.prototxt [BATCHES]: proves that Caffe
// sees the pixels libdata reads.
// (caffe_first_batch --ranks WORLD NET.prototxt: the multi-solver shares, see RankCheck.)
//
// Builds NET in the TEST phase, finds its first data layer (LibData, Data or HDF5Data), runs
// only that layer BATCHES times (default 2) and compares its "data" and "label" tops with the
// batches of libdata's reader opened on the same source with the same settings (file order,
// center crop, mean, scale). Segmentation masks are compared too, every class index: the label
// top when they are the dataset's label (n x 1 x H x W), else LibData's third top. Detection
// boxes (LibData on a dataset with /boxes) are compared as SSD's AnnotatedData label blob,
// 1 x 1 x M x 8, every row (BoxRows). Prints the largest difference per batch; exit 0 when
// every value matches within 1e-5 (relative) and every label, mask and box value exactly, 1
// otherwise, 2 on a usage error.
//
// --train SEED: the TRAIN phase instead (LibData only), with Caffe's random seed SEED: the
// reference reader gets the layer's TRAIN settings (shuffled, full batches, random crop,
// mirror) and the seed the layer drew, the first caffe_rng_rand() after seeding, so the
// LibData layer must be the net's first layer (nothing draws before it). Equal pixels then
// prove the same crops and mirrors, and the boxes must have moved with them.
// --rows FILE: writes each batch's box label top to FILE, for an independent check
// (tests/cli/lib/caffe_boxes_check.py): a line "batch K N C H W M", then M lines of 8 values.
//
// Stock layers transform differently: HDF5Data applies no transform_param at all (the net
// scales with a layer after it), Data applies Caffe's DataTransformer; for those the reader is
// given the same transform Caffe applies, so the comparison checks the stored pixels, order
// and labels, which is what "drop-in" means.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "caffe/caffe.hpp"
#include "caffe/util/math_functions.hpp"
#include "libdata/reader.h"

using caffe::Blob;
using caffe::Caffe;
using caffe::LayerParameter;
using caffe::Net;

namespace
{

int Fail(ld_reader *r, const char *what)
{
    std::fprintf(stderr, "caffe_first_batch: %s: %s\n", what, ld_reader_errmsg(r));
    ld_reader_free(r);
    return 1;
}

uint64_t Hash(const float *p, size_t n)
{ // FNV-1a over the bytes of one sample
    const unsigned char *b = reinterpret_cast<const unsigned char *>(p);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n * sizeof(float); ++i)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

// The rows of SSD's AnnotatedData label blob for the reader's batch b, from the format as
// SSD's annotated_data_layer.cpp and its converter define it: per box [item, class index + 1
// (0 is SSD's background), instance (the box's number among its item's boxes of its class),
// x1 / w, y1 / h, x2 / w, y2 / h (w x h the batch's image size), difficult (1 for VOC difficult
// and for COCO crowd boxes, as SSD's COCO converter marks iscrowd)]; a batch without boxes is
// one row of -1.
std::vector<float> BoxRows(const ld_batch *b)
{
    std::vector<float> rows;
    for (size_t j = 0; j < b->n; ++j) {
        for (uint64_t k = b->box_offsets[j]; k < b->box_offsets[j + 1]; ++k) {
            int instance = 0;
            for (uint64_t i = b->box_offsets[j]; i < k; ++i)
                instance += b->box_labels[i] == b->box_labels[k];
            const float *xy = b->boxes + 4 * k;
            const float row[8] = {static_cast<float>(j),
                                  static_cast<float>(b->box_labels[k] + 1),
                                  static_cast<float>(instance),
                                  xy[0] / b->w,
                                  xy[1] / b->h,
                                  xy[2] / b->w,
                                  xy[3] / b->h,
                                  (b->box_flags[k] & 3) != 0 ? 1.0f : 0.0f};
            rows.insert(rows.end(), row, row + 8);
        }
    }
    if (rows.empty()) rows.assign(8, -1.0f);
    return rows;
}

int FirstDataLayer(const Net<float> &net)
{
    for (size_t i = 0; i < net.layers().size(); ++i) {
        std::string t = net.layers()[i]->type();
        if (t == "LibData" || t == "Data" || t == "HDF5Data") return static_cast<int>(i);
    }
    return -1;
}

// --ranks WORLD NET: the multi-solver case in one process, as Caffe's multi-GPU training runs
// it (one net per solver, solver_rank()/solver_count() set, each solver's RNG seeded with
// random_seed + rank). NET's LibData layer must not crop, mirror or subtract a mean file, so
// each sample's pixels identify it. Every rank reads one epoch in TRAIN; the shares must be
// disjoint, come from the dataset, and hold floor(N / WORLD) samples rounded down to full
// batches each.
int RankCheck(const char *path, int world)
{
    std::vector<std::set<uint64_t>> seen(world);
    size_t per_rank = 0, batch = 0, sample = 0;
    std::string source;
    for (int rank = 0; rank < world; ++rank) {
        Caffe::set_solver_count(world);
        Caffe::set_solver_rank(rank);
        Caffe::set_random_seed(1 + rank);
        Net<float> net(path, caffe::TRAIN);
        int li = FirstDataLayer(net);
        if (li < 0 || net.layers()[li]->type() != std::string("LibData")) {
            std::fprintf(stderr, "caffe_first_batch: %s has no LibData layer in TRAIN\n", path);
            return 2;
        }
        source = net.layers()[li]->layer_param().data_param().source();
        const Blob<float> *data = net.top_vecs()[li][0];
        batch = static_cast<size_t>(data->shape(0));
        sample = static_cast<size_t>(data->count(1));
        ld_reader *r = ld_reader_create(); // the dataset's size, to know the epoch's length
        if (!r) return 1;
        int64_t n = 0;
        if (ld_reader_open(r, source.c_str()) < 0 ||
            ld_reader_get_info(r, LD_R_INFO_SAMPLES, &n) < 0)
            return Fail(r, "open");
        ld_reader_free(r);
        per_rank = static_cast<size_t>(n) / world / batch * batch;
        for (size_t k = 0; k < per_rank / batch; ++k) {
            net.ForwardFromTo(li, li);
            for (size_t j = 0; j < batch; ++j) {
                seen[rank].insert(Hash(data->cpu_data() + j * sample, sample));
            }
        }
    }
    Caffe::set_solver_count(1);
    Caffe::set_solver_rank(0);

    // The reference: every sample once, in file order, with the layer's scale and mean values.
    Net<float> net(path, caffe::TRAIN);
    const LayerParameter &lp = net.layers()[FirstDataLayer(net)]->layer_param();
    ld_reader *r = ld_reader_create();
    if (!r) return 1;
    ld_reader_set(r, LD_R_DTYPE, LD_DTYPE_F32);
    const std::vector<float> means(lp.transform_param().mean_value().begin(),
                                   lp.transform_param().mean_value().end());
    if (!means.empty() && ld_reader_set_floats(r, LD_R_MEAN_VALUES, means.data(), means.size()) < 0)
        return Fail(r, "mean_value");
    if (ld_reader_set_double(r, LD_R_SCALE, lp.transform_param().scale()) < 0 ||
        ld_reader_open(r, source.c_str()) < 0)
        return Fail(r, "open");
    std::set<uint64_t> all;
    size_t total = 0;
    const ld_batch *b = NULL;
    int rc;
    while ((rc = ld_reader_next(r, &b)) == LD_OK) {
        for (size_t j = 0; j < b->n; ++j)
            all.insert(Hash(static_cast<const float *>(b->data) + j * sample, sample));
        total += b->n;
    }
    if (rc < 0) return Fail(r, "next");
    ld_reader_free(r);

    bool ok = all.size() == total; // distinct pictures, or the check cannot tell them apart
    std::set<uint64_t> uni;
    size_t sum = 0;
    for (int rank = 0; rank < world; ++rank) {
        size_t foreign = 0;
        for (uint64_t h : seen[rank])
            foreign += all.count(h) == 0;
        std::printf("rank %d of %d: %zu distinct samples in %zu batches of %zu (expected %zu), "
                    "%zu not in the dataset\n",
                    rank, world, seen[rank].size(), per_rank / batch, batch, per_rank, foreign);
        ok = ok && seen[rank].size() == per_rank && foreign == 0;
        uni.insert(seen[rank].begin(), seen[rank].end());
        sum += seen[rank].size();
    }
    std::printf("%d ranks: %zu samples read, %zu distinct, of %zu in the dataset -> %s\n", world,
                sum, uni.size(), total, ok && uni.size() == sum ? "DISJOINT" : "OVERLAP");
    return ok && uni.size() == sum ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
    const bool ranks = argc == 4 && std::string(argv[1]) == "--ranks";
    bool train = false;
    unsigned int seed = 0;
    const char *rows_path = NULL;
    int a = 1; // the first argument after the options
    while (!ranks && a + 1 < argc) {
        const std::string opt = argv[a];
        if (opt == "--train") {
            train = true;
            seed = static_cast<unsigned int>(std::strtoul(argv[a + 1], NULL, 10));
        } else if (opt == "--rows") {
            rows_path = argv[a + 1];
        } else {
            break;
        }
        a += 2;
    }
    if (!ranks && (argc - a < 1 || argc - a > 2)) {
        std::fprintf(
            stderr, "usage: caffe_first_batch [--train SEED] [--rows FILE] NET.prototxt [BATCHES]\n"
                    "       caffe_first_batch --ranks WORLD NET.prototxt\n");
        return 2;
    }
    FLAGS_logtostderr = 1;
    FLAGS_minloglevel = 1; // warnings and errors only: the comparison is the output
    ::google::InitGoogleLogging(argv[0]);
    Caffe::set_mode(Caffe::CPU);
    if (ranks) return RankCheck(argv[3], std::atoi(argv[2]));
    const int batches = argc - a == 2 ? std::atoi(argv[a + 1]) : 2;
    const char *path = argv[a];

    if (train) Caffe::set_random_seed(seed);
    Net<float> net(path, train ? caffe::TRAIN : caffe::TEST);
    const int li = FirstDataLayer(net);
    if (li < 0) {
        std::fprintf(stderr, "caffe_first_batch: %s has no LibData/Data/HDF5Data layer\n", path);
        return 2;
    }
    const LayerParameter &lp = net.layers()[li]->layer_param();
    if (train && (li != 0 || lp.type() != "LibData")) {
        std::fprintf(stderr, "caffe_first_batch: --train needs a LibData layer first in %s\n",
                     path);
        return 2;
    }
    const bool hdf5 = lp.type() == "HDF5Data";
    const std::string source = hdf5 ? lp.hdf5_data_param().source() : lp.data_param().source();
    const int batch = hdf5 ? lp.hdf5_data_param().batch_size() : lp.data_param().batch_size();
    const caffe::TransformationParameter &tp = lp.transform_param();

    ld_reader *r = ld_reader_create();
    if (!r) return 1;
    ld_reader_set(r, LD_R_BATCH_SIZE, batch);
    ld_reader_set(r, LD_R_DTYPE, LD_DTYPE_F32);
    ld_reader_set(r, LD_R_LABEL_DTYPE, LD_DTYPE_F32);
    if (train) { // the layer's TRAIN settings (libdata_layer.cpp's Configure) and its seed
        Caffe::set_random_seed(seed);
        ld_reader_set(r, LD_R_ORDER, LD_ORDER_SHUFFLE);
        ld_reader_set(r, LD_R_DROP_LAST, 1);
        ld_reader_set(r, LD_R_SEED, caffe::caffe_rng_rand());
        if (tp.crop_size() > 0) ld_reader_set(r, LD_R_RANDOM_CROP, 1);
        if (tp.mirror()) ld_reader_set(r, LD_R_MIRROR, 1);
    } else {
        ld_reader_set(r, LD_R_ORDER, LD_ORDER_SEQUENTIAL);
    }
    if (!hdf5) {
        if (tp.force_color() || tp.force_gray())
            ld_reader_set(r, LD_R_CHANNELS, tp.force_color() ? 3 : 1);
        if (tp.crop_size() > 0) {
            ld_reader_set(r, LD_R_CROP_W, tp.crop_size());
            ld_reader_set(r, LD_R_CROP_H, tp.crop_size());
        }
        if (tp.has_mean_file() && ld_reader_set_str(r, LD_R_MEAN_FILE, tp.mean_file().c_str()) < 0)
            return Fail(r, "mean_file");
        const std::vector<float> means(tp.mean_value().begin(), tp.mean_value().end());
        if (!means.empty() &&
            ld_reader_set_floats(r, LD_R_MEAN_VALUES, means.data(), means.size()) < 0)
            return Fail(r, "mean_value");
        if (tp.scale() != 1.0f && ld_reader_set_double(r, LD_R_SCALE, tp.scale()) < 0)
            return Fail(r, "scale");
    }
    // HDF5Data's list is resolved by Caffe against the current directory; so is the reader's.
    if (ld_reader_open(r, source.c_str()) < 0) return Fail(r, "open");
    int64_t has_boxes = 0; // LibData's label top is then SSD's box blob
    if (ld_reader_get_info(r, LD_R_INFO_BOXES, &has_boxes) < 0) return Fail(r, "info");
    if (lp.type() != "LibData") has_boxes = 0;
    FILE *rows = NULL;
    if (rows_path && !(rows = std::fopen(rows_path, "w"))) {
        std::perror(rows_path);
        ld_reader_free(r);
        return 1;
    }

    const std::vector<Blob<float> *> &tops = net.top_vecs()[li];
    bool ok = true;
    for (int k = 0; k < batches; ++k) {
        net.ForwardFromTo(li, li);
        const ld_batch *b = NULL;
        int rc = ld_reader_next(r, &b);
        if (rc == LD_END) rc = ld_reader_next(r, &b);
        if (rc < 0) return Fail(r, "next");
        const Blob<float> *data = tops[0];
        const size_t count = b->n * static_cast<size_t>(b->c) * b->h * b->w;
        if (static_cast<size_t>(data->count()) != count) {
            std::printf("batch %d: shape differs: Caffe %s, libdata %zux%dx%dx%d\n", k,
                        data->shape_string().c_str(), b->n, b->c, b->h, b->w);
            ok = false;
            continue;
        }
        const float *cd = data->cpu_data();
        const float *ld = static_cast<const float *>(b->data);
        double maxdiff = 0, maxval = 0;
        size_t where = 0;
        for (size_t i = 0; i < count; ++i) {
            double d = std::fabs(static_cast<double>(cd[i]) - ld[i]);
            if (d > maxdiff) {
                maxdiff = d;
                where = i;
            }
            if (std::fabs(ld[i]) > maxval) maxval = std::fabs(ld[i]);
        }
        // Segmentation masks (ld_batch.masks, n x mask_h x mask_w class indices): the label top
        // when they are the dataset's label (LibData's and HDF5Data's n x 1 x H x W label), else
        // LibData's third top.
        const bool masks_are_label = b->masks && b->mask_is_label && !has_boxes;
        const Blob<float> *mask_top = NULL;
        if (b->masks && tops.size() > (masks_are_label ? 1u : 2u))
            mask_top = tops[masks_are_label ? 1 : 2];
        size_t label_diffs = 0, mask_diffs = 0;
        std::string boxes;
        if (tops.size() > 1 && has_boxes) { // 1 x 1 x M x 8, every value exactly
            const std::vector<float> want = BoxRows(b);
            const Blob<float> *t = tops[1];
            const int m = static_cast<int>(want.size() / 8);
            if (t->num_axes() != 4 || t->shape(0) != 1 || t->shape(1) != 1 || t->shape(2) != m ||
                t->shape(3) != 8) {
                std::printf("batch %d: box label shape differs: Caffe %s, expected 1 1 %d 8 "
                            "(%zu boxes)\n",
                            k, t->shape_string().c_str(), m, b->n_boxes);
                ok = false;
                continue;
            }
            const float *cb = t->cpu_data();
            size_t difficult = 0;
            for (size_t i = 0; i < want.size(); ++i)
                label_diffs += cb[i] != want[i];
            for (int i = 0; i < m; ++i)
                difficult += cb[8 * i + 7] == 1;
            if (rows) {
                std::fprintf(rows, "batch %d %zu %d %d %d %d\n", k, b->n, b->c, b->h, b->w, m);
                for (int i = 0; i < m; ++i)
                    for (int v = 0; v < 8; ++v)
                        std::fprintf(rows, "%.9g%c", cb[8 * i + v], v == 7 ? '\n' : ' ');
            }
            boxes = ", boxes " + t->shape_string() + " (" + std::to_string(b->n_boxes) +
                    " in the batch, " + std::to_string(difficult) + " difficult)";
        } else if (tops.size() > 1 && !masks_are_label) { // n labels, or n x K for label vectors
            const size_t nl = b->n * static_cast<size_t>(b->label_k > 0 ? b->label_k : 1);
            if (static_cast<size_t>(tops[1]->count()) != nl) {
                std::printf("batch %d: label shape differs: Caffe %s, libdata %zu x %d\n", k,
                            tops[1]->shape_string().c_str(), b->n, b->label_k);
                ok = false;
                continue;
            }
            const float *cl = tops[1]->cpu_data();
            const float *ll = static_cast<const float *>(b->labels);
            for (size_t i = 0; i < nl; ++i)
                label_diffs += cl[i] != ll[i];
        }
        std::string masks;
        if (mask_top) { // every class index, as the float Caffe gives the loss
            const size_t nm = b->n * static_cast<size_t>(b->mask_h) * b->mask_w;
            if (static_cast<size_t>(mask_top->count()) != nm || mask_top->num_axes() != 4 ||
                mask_top->shape(1) != 1) {
                std::printf("batch %d: mask shape differs: Caffe %s, libdata %zu x 1 x %d x %d\n",
                            k, mask_top->shape_string().c_str(), b->n, b->mask_h, b->mask_w);
                ok = false;
                continue;
            }
            const float *cm = mask_top->cpu_data();
            const uint16_t *wide = reinterpret_cast<const uint16_t *>(b->masks); // uint16 masks
            for (size_t i = 0; i < nm; ++i)
                mask_diffs += cm[i] != static_cast<float>(
                                           b->mask_dtype == LD_DTYPE_U16 ? wide[i] : b->masks[i]);
            masks =
                ", masks " + mask_top->shape_string() + " differing: " + std::to_string(mask_diffs);
        }
        const bool same =
            maxdiff <= 1e-5 * (maxval > 1 ? maxval : 1) && label_diffs == 0 && mask_diffs == 0;
        std::printf("batch %d (%s layer, dataset samples %llu..%llu): data %s %zu values, "
                    "max |caffe - libdata| = %g (at %zu)%s, labels differing: %zu%s -> %s\n",
                    k, lp.type().c_str(), static_cast<unsigned long long>(b->indices[0]),
                    static_cast<unsigned long long>(b->indices[b->n - 1]),
                    data->shape_string().c_str(), count, maxdiff, where, boxes.c_str(), label_diffs,
                    masks.c_str(), same ? "EQUAL" : "DIFFERENT");
        ok = ok && same;
    }
    ld_reader_free(r);
    if (rows && std::fclose(rows) != 0) {
        std::perror(rows_path);
        return 1;
    }
    return ok ? 0 : 1;
}
