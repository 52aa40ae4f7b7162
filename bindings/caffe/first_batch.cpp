// caffe_first_batch NET.prototxt [BATCHES]: proves that Caffe sees the pixels libdata reads.
//
// Builds NET in the TEST phase, finds its first data layer (LibData, Data or HDF5Data), runs
// only that layer BATCHES times (default 2) and compares its "data" and "label" tops with the
// batches of libdata's reader opened on the same source with the same settings (file order,
// center crop, mean, scale). Prints the largest difference per batch; exit 0 when every value
// matches within 1e-5 (relative), 1 otherwise, 2 on a usage error.
//
// Stock layers transform differently: HDF5Data applies no transform_param at all (the net
// scales with a layer after it), Data applies Caffe's DataTransformer; for those the reader is
// given the same transform Caffe applies, so the comparison checks the stored pixels, order
// and labels, which is what "drop-in" means.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "caffe/caffe.hpp"
#include "libdata/reader.h"

using caffe::Blob;
using caffe::Caffe;
using caffe::LayerParameter;
using caffe::Net;

namespace {

std::string Num(double v) {  // all the digits of a float (std::to_string keeps only 6 decimals)
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

int Fail(ld_reader* r, const char* what) {
  std::fprintf(stderr, "caffe_first_batch: %s: %s\n", what, ld_reader_errmsg(r));
  ld_reader_free(r);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: caffe_first_batch NET.prototxt [BATCHES]\n");
    return 2;
  }
  FLAGS_logtostderr = 1;
  FLAGS_minloglevel = 1;  // warnings and errors only: the comparison is the output
  ::google::InitGoogleLogging(argv[0]);
  Caffe::set_mode(Caffe::CPU);
  const int batches = argc == 3 ? std::atoi(argv[2]) : 2;

  Net<float> net(argv[1], caffe::TEST);
  int li = -1;
  for (size_t i = 0; i < net.layers().size(); ++i) {
    std::string t = net.layers()[i]->type();
    if (t == "LibData" || t == "Data" || t == "HDF5Data") {
      li = static_cast<int>(i);
      break;
    }
  }
  if (li < 0) {
    std::fprintf(stderr, "caffe_first_batch: %s has no LibData/Data/HDF5Data layer\n", argv[1]);
    return 2;
  }
  const LayerParameter& lp = net.layers()[li]->layer_param();
  const bool hdf5 = lp.type() == "HDF5Data";
  const std::string source = hdf5 ? lp.hdf5_data_param().source() : lp.data_param().source();
  const int batch = hdf5 ? lp.hdf5_data_param().batch_size() : lp.data_param().batch_size();
  const caffe::TransformationParameter& tp = lp.transform_param();

  ld_reader* r = ld_reader_create();
  if (!r) return 1;
  ld_reader_set(r, LD_R_BATCH_SIZE, batch);
  ld_reader_set(r, LD_R_DTYPE, LD_DTYPE_F32);
  ld_reader_set(r, LD_R_LABEL_DTYPE, LD_DTYPE_F32);
  ld_reader_set(r, LD_R_ORDER, LD_ORDER_SEQUENTIAL);
  if (!hdf5) {
    if (tp.crop_size() > 0) {
      ld_reader_set(r, LD_R_CROP_W, tp.crop_size());
      ld_reader_set(r, LD_R_CROP_H, tp.crop_size());
    }
    if (tp.has_mean_file() && ld_reader_set_str(r, LD_R_MEAN_FILE, tp.mean_file().c_str()) < 0)
      return Fail(r, "mean_file");
    std::string means;
    for (int i = 0; i < tp.mean_value_size(); ++i)
      means += (i ? "," : "") + Num(tp.mean_value(i));
    if (!means.empty() && ld_reader_set_str(r, LD_R_MEAN_VALUES, means.c_str()) < 0)
      return Fail(r, "mean_value");
    if (tp.scale() != 1.0f &&
        ld_reader_set_str(r, LD_R_SCALE, Num(tp.scale()).c_str()) < 0)
      return Fail(r, "scale");
  }
  // HDF5Data's list is resolved by Caffe against the current directory; so is the reader's.
  if (ld_reader_open(r, source.c_str()) < 0) return Fail(r, "open");

  const std::vector<Blob<float>*>& tops = net.top_vecs()[li];
  bool ok = true;
  for (int k = 0; k < batches; ++k) {
    net.ForwardFromTo(li, li);
    const ld_batch* b = NULL;
    int rc = ld_reader_next(r, &b);
    if (rc == LD_END) rc = ld_reader_next(r, &b);
    if (rc < 0) return Fail(r, "next");
    const Blob<float>* data = tops[0];
    const size_t count = b->n * static_cast<size_t>(b->c) * b->h * b->w;
    if (static_cast<size_t>(data->count()) != count) {
      std::printf("batch %d: shape differs: Caffe %s, libdata %zux%dx%dx%d\n", k,
                  data->shape_string().c_str(), b->n, b->c, b->h, b->w);
      ok = false;
      continue;
    }
    const float* cd = data->cpu_data();
    const float* ld = static_cast<const float*>(b->data);
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
    size_t label_diffs = 0;
    if (tops.size() > 1) {
      const float* cl = tops[1]->cpu_data();
      const float* ll = static_cast<const float*>(b->labels);
      for (size_t i = 0; i < b->n; ++i) label_diffs += cl[i] != ll[i];
    }
    const bool same = maxdiff <= 1e-5 * (maxval > 1 ? maxval : 1) && label_diffs == 0;
    std::printf("batch %d (%s layer, dataset samples %llu..%llu): data %s %zu values, "
                "max |caffe - libdata| = %g (at %zu), labels differing: %zu -> %s\n",
                k, lp.type().c_str(), static_cast<unsigned long long>(b->indices[0]),
                static_cast<unsigned long long>(b->indices[b->n - 1]),
                data->shape_string().c_str(), count, maxdiff, where, label_diffs,
                same ? "EQUAL" : "DIFFERENT");
    ok = ok && same;
  }
  ld_reader_free(r);
  return ok ? 0 : 1;
}
