// LibDataLayer: a Caffe data layer (type "LibData") that streams mini-batches from a libdata
// dataset (an HDF5 file, a --split .txt list of HDF5 files, or an LMDB of Caffe Datums) with
// libdata's reader. It is configured by Caffe's existing messages, so caffe.proto is unchanged:
//
//   layer {
//     name: "data" type: "LibData" top: "data" top: "label"
//     include { phase: TRAIN }
//     data_param { source: "train.h5" batch_size: 64 }
//     transform_param { scale: 0.00390625 mirror: true crop_size: 28 mean_value: 128 }
//   }
//
// Prefetching is done by libdata's own worker threads into a fixed ring of batch buffers, so
// this is a plain Layer (not BasePrefetchingDataLayer): a second prefetch ring in Caffe would
// only double the memory. Forward hands the reader's current batch to the data top (float
// nets borrow the buffer, double nets convert a copy) and copies the labels.
#ifndef LIBDATA_CAFFE_LIBDATA_LAYER_HPP_
#define LIBDATA_CAFFE_LIBDATA_LAYER_HPP_

#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/proto/caffe.pb.h"

struct ld_reader;
struct ld_batch;

namespace caffe
{

template <typename Dtype> class LibDataLayer : public Layer<Dtype>
{
  public:
    explicit LibDataLayer(const LayerParameter &param)
        : Layer<Dtype>(param), reader_(NULL), batch_size_(0), mask_top_(0), boxes_(false)
    {
    }
    virtual ~LibDataLayer();
    virtual void LayerSetUp(const vector<Blob<Dtype> *> &bottom, const vector<Blob<Dtype> *> &top);
    // Data layers have no bottoms: the tops are shaped in LayerSetUp and per batch in Forward.
    virtual void Reshape(const vector<Blob<Dtype> *> & /*bottom*/,
                         const vector<Blob<Dtype> *> & /*top*/)
    {
    }

    virtual inline const char *type() const
    {
        return "LibData";
    }
    virtual inline int ExactNumBottomBlobs() const
    {
        return 0;
    }
    virtual inline int MinTopBlobs() const
    {
        return 1;
    }
    virtual inline int MaxTopBlobs() const
    {
        return 3;
    } // data, label, mask

  protected:
    virtual void Forward_cpu(const vector<Blob<Dtype> *> &bottom, const vector<Blob<Dtype> *> &top);
    virtual void Backward_cpu(const vector<Blob<Dtype> *> & /*top*/,
                              const vector<bool> & /*propagate_down*/,
                              const vector<Blob<Dtype> *> & /*bottom*/)
    {
    }

    // Configures reader_ from data_param/transform_param; LOG(FATAL) on any error.
    void Configure();
    // The next batch, starting a new epoch at the end of one; LOG(FATAL) on a read error.
    const ld_batch *NextBatch();
    // The batch's boxes into `top` as SSD's AnnotatedData label blob (1 x 1 x boxes x 8).
    void SetBoxes(const ld_batch *b, Blob<Dtype> *top);

    ld_reader *reader_;
    int batch_size_;
    int mask_top_; // the top that takes the masks: 1 (they are the label, no boxes), 2, or 0
    bool boxes_;   // detection boxes: the label top is SSD's AnnotatedData blob (SetBoxes)
};

} // namespace caffe

#endif // LIBDATA_CAFFE_LIBDATA_LAYER_HPP_
