/*
 * The planner's caffe.proto check (plan_schema.h). The tables below are caffe.proto's
 * messages reachable from NetParameter and SolverParameter, field by field in the proto's
 * order, and the enums they use: BVLC Caffe master 9b89154 (src/caffe/proto/caffe.proto),
 * copied mechanically (a field's name, label and type), comments dropped. Keep them whole:
 * refusing a field Caffe accepts is worse than missing a typo.
 */
#include "plan/plan_schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A field: its name, kind ('i' signed integer, 'u' unsigned, 'f' float/double, 'b' bool,
 * 's' string/bytes, 'e' enum, 'm' message), repeated or not, and the M_* / E_* type of a
 * message or enum field. */
typedef struct pt_field {
    const char *name;
    char kind;
    char repeated;
    signed char type;
} pt_field;

typedef struct pt_message {
    const char *name;
    const pt_field *fields;
    size_t n;
} pt_message;

typedef struct pt_value {
    const char *name;
    int number;
} pt_value;

typedef struct pt_enum {
    const char *name;
    const pt_value *values;
    size_t n;
} pt_enum;

enum {
    M_BlobShape,
    M_BlobProto,
    M_FillerParameter,
    M_NetParameter,
    M_SolverParameter,
    M_NetState,
    M_NetStateRule,
    M_ParamSpec,
    M_LayerParameter,
    M_TransformationParameter,
    M_LossParameter,
    M_AccuracyParameter,
    M_ArgMaxParameter,
    M_ClipParameter,
    M_ConcatParameter,
    M_BatchNormParameter,
    M_BiasParameter,
    M_ContrastiveLossParameter,
    M_ConvolutionParameter,
    M_CropParameter,
    M_DataParameter,
    M_DropoutParameter,
    M_DummyDataParameter,
    M_EltwiseParameter,
    M_ELUParameter,
    M_EmbedParameter,
    M_ExpParameter,
    M_FlattenParameter,
    M_HDF5DataParameter,
    M_HDF5OutputParameter,
    M_HingeLossParameter,
    M_ImageDataParameter,
    M_InfogainLossParameter,
    M_InnerProductParameter,
    M_InputParameter,
    M_LogParameter,
    M_LRNParameter,
    M_MemoryDataParameter,
    M_MVNParameter,
    M_ParameterParameter,
    M_PoolingParameter,
    M_PowerParameter,
    M_PythonParameter,
    M_RecurrentParameter,
    M_ReductionParameter,
    M_ReLUParameter,
    M_ReshapeParameter,
    M_ScaleParameter,
    M_SigmoidParameter,
    M_SliceParameter,
    M_SoftmaxParameter,
    M_SwishParameter,
    M_TanHParameter,
    M_TileParameter,
    M_ThresholdParameter,
    M_WindowDataParameter,
    M_SPPParameter,
    M_V1LayerParameter,
    M_V0LayerParameter,
    M_PReLUParameter,
    M_N
};

enum {
    E_FillerParameter_VarianceNorm,
    E_SolverParameter_SnapshotFormat,
    E_SolverParameter_SolverMode,
    E_SolverParameter_SolverType,
    E_Phase,
    E_ParamSpec_DimCheckMode,
    E_LossParameter_NormalizationMode,
    E_ConvolutionParameter_Engine,
    E_DataParameter_DB,
    E_EltwiseParameter_EltwiseOp,
    E_HingeLossParameter_Norm,
    E_LRNParameter_NormRegion,
    E_LRNParameter_Engine,
    E_PoolingParameter_PoolMethod,
    E_PoolingParameter_Engine,
    E_PoolingParameter_RoundMode,
    E_ReductionParameter_ReductionOp,
    E_ReLUParameter_Engine,
    E_SigmoidParameter_Engine,
    E_SoftmaxParameter_Engine,
    E_TanHParameter_Engine,
    E_SPPParameter_PoolMethod,
    E_SPPParameter_Engine,
    E_V1LayerParameter_LayerType,
    E_V1LayerParameter_DimCheckMode,
    E_V0LayerParameter_PoolMethod,
    E_N
};

static const pt_value v_fan_in_fan_out_average[] = {{"FAN_IN", 0}, {"FAN_OUT", 1}, {"AVERAGE", 2}};
static const pt_value v_hdf5_binaryproto[] = {{"HDF5", 0}, {"BINARYPROTO", 1}};
static const pt_value v_cpu_gpu[] = {{"CPU", 0}, {"GPU", 1}};
static const pt_value v_solver_type[] = {{"SGD", 0},     {"NESTEROV", 1}, {"ADAGRAD", 2},
                                         {"RMSPROP", 3}, {"ADADELTA", 4}, {"ADAM", 5}};
static const pt_value v_train_test[] = {{"TRAIN", 0}, {"TEST", 1}};
static const pt_value v_strict_permissive[] = {{"STRICT", 0}, {"PERMISSIVE", 1}};
static const pt_value v_normalization[] = {
    {"FULL", 0}, {"VALID", 1}, {"BATCH_SIZE", 2}, {"NONE", 3}};
static const pt_value v_default_caffe_cudnn[] = {{"DEFAULT", 0}, {"CAFFE", 1}, {"CUDNN", 2}};
static const pt_value v_leveldb_lmdb[] = {{"LEVELDB", 0}, {"LMDB", 1}};
static const pt_value v_prod_sum_max[] = {{"PROD", 0}, {"SUM", 1}, {"MAX", 2}};
static const pt_value v_l1_l2[] = {{"L1", 1}, {"L2", 2}};
static const pt_value v_across_channels_within_channel[] = {{"ACROSS_CHANNELS", 0},
                                                            {"WITHIN_CHANNEL", 1}};
static const pt_value v_max_ave_stochastic[] = {{"MAX", 0}, {"AVE", 1}, {"STOCHASTIC", 2}};
static const pt_value v_ceil_floor[] = {{"CEIL", 0}, {"FLOOR", 1}};
static const pt_value v_reduction_op[] = {{"SUM", 1}, {"ASUM", 2}, {"SUMSQ", 3}, {"MEAN", 4}};
static const pt_value v_v1_layer_type[] = {{"NONE", 0},
                                           {"ABSVAL", 35},
                                           {"ACCURACY", 1},
                                           {"ARGMAX", 30},
                                           {"BNLL", 2},
                                           {"CONCAT", 3},
                                           {"CONTRASTIVE_LOSS", 37},
                                           {"CONVOLUTION", 4},
                                           {"DATA", 5},
                                           {"DECONVOLUTION", 39},
                                           {"DROPOUT", 6},
                                           {"DUMMY_DATA", 32},
                                           {"EUCLIDEAN_LOSS", 7},
                                           {"ELTWISE", 25},
                                           {"EXP", 38},
                                           {"FLATTEN", 8},
                                           {"HDF5_DATA", 9},
                                           {"HDF5_OUTPUT", 10},
                                           {"HINGE_LOSS", 28},
                                           {"IM2COL", 11},
                                           {"IMAGE_DATA", 12},
                                           {"INFOGAIN_LOSS", 13},
                                           {"INNER_PRODUCT", 14},
                                           {"LRN", 15},
                                           {"MEMORY_DATA", 29},
                                           {"MULTINOMIAL_LOGISTIC_LOSS", 16},
                                           {"MVN", 34},
                                           {"POOLING", 17},
                                           {"POWER", 26},
                                           {"RELU", 18},
                                           {"SIGMOID", 19},
                                           {"SIGMOID_CROSS_ENTROPY_LOSS", 27},
                                           {"SILENCE", 36},
                                           {"SOFTMAX", 20},
                                           {"SOFTMAX_LOSS", 21},
                                           {"SPLIT", 22},
                                           {"SLICE", 33},
                                           {"TANH", 23},
                                           {"WINDOW_DATA", 24},
                                           {"THRESHOLD", 31}};

#define ENUM(e, v)                                                                                 \
    {                                                                                              \
        "caffe." #e, v, sizeof v / sizeof *v                                                       \
    }
static const pt_enum enums[E_N] = {
    ENUM(FillerParameter.VarianceNorm, v_fan_in_fan_out_average),
    ENUM(SolverParameter.SnapshotFormat, v_hdf5_binaryproto),
    ENUM(SolverParameter.SolverMode, v_cpu_gpu),
    ENUM(SolverParameter.SolverType, v_solver_type),
    ENUM(Phase, v_train_test),
    ENUM(ParamSpec.DimCheckMode, v_strict_permissive),
    ENUM(LossParameter.NormalizationMode, v_normalization),
    ENUM(ConvolutionParameter.Engine, v_default_caffe_cudnn),
    ENUM(DataParameter.DB, v_leveldb_lmdb),
    ENUM(EltwiseParameter.EltwiseOp, v_prod_sum_max),
    ENUM(HingeLossParameter.Norm, v_l1_l2),
    ENUM(LRNParameter.NormRegion, v_across_channels_within_channel),
    ENUM(LRNParameter.Engine, v_default_caffe_cudnn),
    ENUM(PoolingParameter.PoolMethod, v_max_ave_stochastic),
    ENUM(PoolingParameter.Engine, v_default_caffe_cudnn),
    ENUM(PoolingParameter.RoundMode, v_ceil_floor),
    ENUM(ReductionParameter.ReductionOp, v_reduction_op),
    ENUM(ReLUParameter.Engine, v_default_caffe_cudnn),
    ENUM(SigmoidParameter.Engine, v_default_caffe_cudnn),
    ENUM(SoftmaxParameter.Engine, v_default_caffe_cudnn),
    ENUM(TanHParameter.Engine, v_default_caffe_cudnn),
    ENUM(SPPParameter.PoolMethod, v_max_ave_stochastic),
    ENUM(SPPParameter.Engine, v_default_caffe_cudnn),
    ENUM(V1LayerParameter.LayerType, v_v1_layer_type),
    ENUM(V1LayerParameter.DimCheckMode, v_strict_permissive),
    ENUM(V0LayerParameter.PoolMethod, v_max_ave_stochastic),
};

static const pt_field f_BlobShape[] = {{"dim", 'i', 1, -1}};
static const pt_field f_BlobProto[] = {
    {"shape", 'm', 0, M_BlobShape}, {"data", 'f', 1, -1},        {"diff", 'f', 1, -1},
    {"double_data", 'f', 1, -1},    {"double_diff", 'f', 1, -1}, {"num", 'i', 0, -1},
    {"channels", 'i', 0, -1},       {"height", 'i', 0, -1},      {"width", 'i', 0, -1}};
static const pt_field f_FillerParameter[] = {
    {"type", 's', 0, -1},   {"value", 'f', 0, -1},
    {"min", 'f', 0, -1},    {"max", 'f', 0, -1},
    {"mean", 'f', 0, -1},   {"std", 'f', 0, -1},
    {"sparse", 'i', 0, -1}, {"variance_norm", 'e', 0, E_FillerParameter_VarianceNorm}};
static const pt_field f_NetParameter[] = {{"name", 's', 0, -1},
                                          {"input", 's', 1, -1},
                                          {"input_shape", 'm', 1, M_BlobShape},
                                          {"input_dim", 'i', 1, -1},
                                          {"force_backward", 'b', 0, -1},
                                          {"state", 'm', 0, M_NetState},
                                          {"debug_info", 'b', 0, -1},
                                          {"layer", 'm', 1, M_LayerParameter},
                                          {"layers", 'm', 1, M_V1LayerParameter}};
static const pt_field f_SolverParameter[] = {
    {"net", 's', 0, -1},
    {"net_param", 'm', 0, M_NetParameter},
    {"train_net", 's', 0, -1},
    {"test_net", 's', 1, -1},
    {"train_net_param", 'm', 0, M_NetParameter},
    {"test_net_param", 'm', 1, M_NetParameter},
    {"train_state", 'm', 0, M_NetState},
    {"test_state", 'm', 1, M_NetState},
    {"test_iter", 'i', 1, -1},
    {"test_interval", 'i', 0, -1},
    {"test_compute_loss", 'b', 0, -1},
    {"test_initialization", 'b', 0, -1},
    {"base_lr", 'f', 0, -1},
    {"display", 'i', 0, -1},
    {"average_loss", 'i', 0, -1},
    {"max_iter", 'i', 0, -1},
    {"iter_size", 'i', 0, -1},
    {"lr_policy", 's', 0, -1},
    {"gamma", 'f', 0, -1},
    {"power", 'f', 0, -1},
    {"momentum", 'f', 0, -1},
    {"weight_decay", 'f', 0, -1},
    {"regularization_type", 's', 0, -1},
    {"stepsize", 'i', 0, -1},
    {"stepvalue", 'i', 1, -1},
    {"clip_gradients", 'f', 0, -1},
    {"snapshot", 'i', 0, -1},
    {"snapshot_prefix", 's', 0, -1},
    {"snapshot_diff", 'b', 0, -1},
    {"snapshot_format", 'e', 0, E_SolverParameter_SnapshotFormat},
    {"solver_mode", 'e', 0, E_SolverParameter_SolverMode},
    {"device_id", 'i', 0, -1},
    {"random_seed", 'i', 0, -1},
    {"type", 's', 0, -1},
    {"delta", 'f', 0, -1},
    {"momentum2", 'f', 0, -1},
    {"rms_decay", 'f', 0, -1},
    {"debug_info", 'b', 0, -1},
    {"snapshot_after_train", 'b', 0, -1},
    {"solver_type", 'e', 0, E_SolverParameter_SolverType},
    {"layer_wise_reduce", 'b', 0, -1},
    {"weights", 's', 1, -1}};
static const pt_field f_NetState[] = {
    {"phase", 'e', 0, E_Phase}, {"level", 'i', 0, -1}, {"stage", 's', 1, -1}};
static const pt_field f_NetStateRule[] = {{"phase", 'e', 0, E_Phase},
                                          {"min_level", 'i', 0, -1},
                                          {"max_level", 'i', 0, -1},
                                          {"stage", 's', 1, -1},
                                          {"not_stage", 's', 1, -1}};
static const pt_field f_ParamSpec[] = {{"name", 's', 0, -1},
                                       {"share_mode", 'e', 0, E_ParamSpec_DimCheckMode},
                                       {"lr_mult", 'f', 0, -1},
                                       {"decay_mult", 'f', 0, -1}};
static const pt_field f_LayerParameter[] = {
    {"name", 's', 0, -1},
    {"type", 's', 0, -1},
    {"bottom", 's', 1, -1},
    {"top", 's', 1, -1},
    {"phase", 'e', 0, E_Phase},
    {"loss_weight", 'f', 1, -1},
    {"param", 'm', 1, M_ParamSpec},
    {"blobs", 'm', 1, M_BlobProto},
    {"propagate_down", 'b', 1, -1},
    {"include", 'm', 1, M_NetStateRule},
    {"exclude", 'm', 1, M_NetStateRule},
    {"transform_param", 'm', 0, M_TransformationParameter},
    {"loss_param", 'm', 0, M_LossParameter},
    {"accuracy_param", 'm', 0, M_AccuracyParameter},
    {"argmax_param", 'm', 0, M_ArgMaxParameter},
    {"batch_norm_param", 'm', 0, M_BatchNormParameter},
    {"bias_param", 'm', 0, M_BiasParameter},
    {"clip_param", 'm', 0, M_ClipParameter},
    {"concat_param", 'm', 0, M_ConcatParameter},
    {"contrastive_loss_param", 'm', 0, M_ContrastiveLossParameter},
    {"convolution_param", 'm', 0, M_ConvolutionParameter},
    {"crop_param", 'm', 0, M_CropParameter},
    {"data_param", 'm', 0, M_DataParameter},
    {"dropout_param", 'm', 0, M_DropoutParameter},
    {"dummy_data_param", 'm', 0, M_DummyDataParameter},
    {"eltwise_param", 'm', 0, M_EltwiseParameter},
    {"elu_param", 'm', 0, M_ELUParameter},
    {"embed_param", 'm', 0, M_EmbedParameter},
    {"exp_param", 'm', 0, M_ExpParameter},
    {"flatten_param", 'm', 0, M_FlattenParameter},
    {"hdf5_data_param", 'm', 0, M_HDF5DataParameter},
    {"hdf5_output_param", 'm', 0, M_HDF5OutputParameter},
    {"hinge_loss_param", 'm', 0, M_HingeLossParameter},
    {"image_data_param", 'm', 0, M_ImageDataParameter},
    {"infogain_loss_param", 'm', 0, M_InfogainLossParameter},
    {"inner_product_param", 'm', 0, M_InnerProductParameter},
    {"input_param", 'm', 0, M_InputParameter},
    {"log_param", 'm', 0, M_LogParameter},
    {"lrn_param", 'm', 0, M_LRNParameter},
    {"memory_data_param", 'm', 0, M_MemoryDataParameter},
    {"mvn_param", 'm', 0, M_MVNParameter},
    {"parameter_param", 'm', 0, M_ParameterParameter},
    {"pooling_param", 'm', 0, M_PoolingParameter},
    {"power_param", 'm', 0, M_PowerParameter},
    {"prelu_param", 'm', 0, M_PReLUParameter},
    {"python_param", 'm', 0, M_PythonParameter},
    {"recurrent_param", 'm', 0, M_RecurrentParameter},
    {"reduction_param", 'm', 0, M_ReductionParameter},
    {"relu_param", 'm', 0, M_ReLUParameter},
    {"reshape_param", 'm', 0, M_ReshapeParameter},
    {"scale_param", 'm', 0, M_ScaleParameter},
    {"sigmoid_param", 'm', 0, M_SigmoidParameter},
    {"softmax_param", 'm', 0, M_SoftmaxParameter},
    {"spp_param", 'm', 0, M_SPPParameter},
    {"slice_param", 'm', 0, M_SliceParameter},
    {"swish_param", 'm', 0, M_SwishParameter},
    {"tanh_param", 'm', 0, M_TanHParameter},
    {"threshold_param", 'm', 0, M_ThresholdParameter},
    {"tile_param", 'm', 0, M_TileParameter},
    {"window_data_param", 'm', 0, M_WindowDataParameter}};
static const pt_field f_TransformationParameter[] = {
    {"scale", 'f', 0, -1},     {"mirror", 'b', 0, -1},     {"crop_size", 'u', 0, -1},
    {"mean_file", 's', 0, -1}, {"mean_value", 'f', 1, -1}, {"force_color", 'b', 0, -1},
    {"force_gray", 'b', 0, -1}};
static const pt_field f_LossParameter[] = {
    {"ignore_label", 'i', 0, -1},
    {"normalization", 'e', 0, E_LossParameter_NormalizationMode},
    {"normalize", 'b', 0, -1}};
static const pt_field f_AccuracyParameter[] = {
    {"top_k", 'u', 0, -1}, {"axis", 'i', 0, -1}, {"ignore_label", 'i', 0, -1}};
static const pt_field f_ArgMaxParameter[] = {
    {"out_max_val", 'b', 0, -1}, {"top_k", 'u', 0, -1}, {"axis", 'i', 0, -1}};
static const pt_field f_ClipParameter[] = {{"min", 'f', 0, -1}, {"max", 'f', 0, -1}};
static const pt_field f_ConcatParameter[] = {{"axis", 'i', 0, -1}, {"concat_dim", 'u', 0, -1}};
static const pt_field f_BatchNormParameter[] = {
    {"use_global_stats", 'b', 0, -1}, {"moving_average_fraction", 'f', 0, -1}, {"eps", 'f', 0, -1}};
static const pt_field f_BiasParameter[] = {
    {"axis", 'i', 0, -1}, {"num_axes", 'i', 0, -1}, {"filler", 'm', 0, M_FillerParameter}};
static const pt_field f_ContrastiveLossParameter[] = {{"margin", 'f', 0, -1},
                                                      {"legacy_version", 'b', 0, -1}};
static const pt_field f_ConvolutionParameter[] = {{"num_output", 'u', 0, -1},
                                                  {"bias_term", 'b', 0, -1},
                                                  {"pad", 'u', 1, -1},
                                                  {"kernel_size", 'u', 1, -1},
                                                  {"stride", 'u', 1, -1},
                                                  {"dilation", 'u', 1, -1},
                                                  {"pad_h", 'u', 0, -1},
                                                  {"pad_w", 'u', 0, -1},
                                                  {"kernel_h", 'u', 0, -1},
                                                  {"kernel_w", 'u', 0, -1},
                                                  {"stride_h", 'u', 0, -1},
                                                  {"stride_w", 'u', 0, -1},
                                                  {"group", 'u', 0, -1},
                                                  {"weight_filler", 'm', 0, M_FillerParameter},
                                                  {"bias_filler", 'm', 0, M_FillerParameter},
                                                  {"engine", 'e', 0, E_ConvolutionParameter_Engine},
                                                  {"axis", 'i', 0, -1},
                                                  {"force_nd_im2col", 'b', 0, -1}};
static const pt_field f_CropParameter[] = {{"axis", 'i', 0, -1}, {"offset", 'u', 1, -1}};
static const pt_field f_DataParameter[] = {{"source", 's', 0, -1},
                                           {"batch_size", 'u', 0, -1},
                                           {"rand_skip", 'u', 0, -1},
                                           {"backend", 'e', 0, E_DataParameter_DB},
                                           {"scale", 'f', 0, -1},
                                           {"mean_file", 's', 0, -1},
                                           {"crop_size", 'u', 0, -1},
                                           {"mirror", 'b', 0, -1},
                                           {"force_encoded_color", 'b', 0, -1},
                                           {"prefetch", 'u', 0, -1}};
static const pt_field f_DropoutParameter[] = {{"dropout_ratio", 'f', 0, -1}};
static const pt_field f_DummyDataParameter[] = {{"data_filler", 'm', 1, M_FillerParameter},
                                                {"shape", 'm', 1, M_BlobShape},
                                                {"num", 'u', 1, -1},
                                                {"channels", 'u', 1, -1},
                                                {"height", 'u', 1, -1},
                                                {"width", 'u', 1, -1}};
static const pt_field f_EltwiseParameter[] = {{"operation", 'e', 0, E_EltwiseParameter_EltwiseOp},
                                              {"coeff", 'f', 1, -1},
                                              {"stable_prod_grad", 'b', 0, -1}};
static const pt_field f_ELUParameter[] = {{"alpha", 'f', 0, -1}};
static const pt_field f_EmbedParameter[] = {{"num_output", 'u', 0, -1},
                                            {"input_dim", 'u', 0, -1},
                                            {"bias_term", 'b', 0, -1},
                                            {"weight_filler", 'm', 0, M_FillerParameter},
                                            {"bias_filler", 'm', 0, M_FillerParameter}};
static const pt_field f_ExpParameter[] = {
    {"base", 'f', 0, -1}, {"scale", 'f', 0, -1}, {"shift", 'f', 0, -1}};
static const pt_field f_FlattenParameter[] = {{"axis", 'i', 0, -1}, {"end_axis", 'i', 0, -1}};
static const pt_field f_HDF5DataParameter[] = {
    {"source", 's', 0, -1}, {"batch_size", 'u', 0, -1}, {"shuffle", 'b', 0, -1}};
static const pt_field f_HDF5OutputParameter[] = {{"file_name", 's', 0, -1}};
static const pt_field f_HingeLossParameter[] = {{"norm", 'e', 0, E_HingeLossParameter_Norm}};
static const pt_field f_ImageDataParameter[] = {
    {"source", 's', 0, -1},    {"batch_size", 'u', 0, -1}, {"rand_skip", 'u', 0, -1},
    {"shuffle", 'b', 0, -1},   {"new_height", 'u', 0, -1}, {"new_width", 'u', 0, -1},
    {"is_color", 'b', 0, -1},  {"scale", 'f', 0, -1},      {"mean_file", 's', 0, -1},
    {"crop_size", 'u', 0, -1}, {"mirror", 'b', 0, -1},     {"root_folder", 's', 0, -1}};
static const pt_field f_InfogainLossParameter[] = {{"source", 's', 0, -1}, {"axis", 'i', 0, -1}};
static const pt_field f_InnerProductParameter[] = {{"num_output", 'u', 0, -1},
                                                   {"bias_term", 'b', 0, -1},
                                                   {"weight_filler", 'm', 0, M_FillerParameter},
                                                   {"bias_filler", 'm', 0, M_FillerParameter},
                                                   {"axis", 'i', 0, -1},
                                                   {"transpose", 'b', 0, -1}};
static const pt_field f_InputParameter[] = {{"shape", 'm', 1, M_BlobShape}};
static const pt_field f_LogParameter[] = {
    {"base", 'f', 0, -1}, {"scale", 'f', 0, -1}, {"shift", 'f', 0, -1}};
static const pt_field f_LRNParameter[] = {
    {"local_size", 'u', 0, -1}, {"alpha", 'f', 0, -1},
    {"beta", 'f', 0, -1},       {"norm_region", 'e', 0, E_LRNParameter_NormRegion},
    {"k", 'f', 0, -1},          {"engine", 'e', 0, E_LRNParameter_Engine}};
static const pt_field f_MemoryDataParameter[] = {{"batch_size", 'u', 0, -1},
                                                 {"channels", 'u', 0, -1},
                                                 {"height", 'u', 0, -1},
                                                 {"width", 'u', 0, -1}};
static const pt_field f_MVNParameter[] = {
    {"normalize_variance", 'b', 0, -1}, {"across_channels", 'b', 0, -1}, {"eps", 'f', 0, -1}};
static const pt_field f_ParameterParameter[] = {{"shape", 'm', 0, M_BlobShape}};
static const pt_field f_PoolingParameter[] = {{"pool", 'e', 0, E_PoolingParameter_PoolMethod},
                                              {"pad", 'u', 0, -1},
                                              {"pad_h", 'u', 0, -1},
                                              {"pad_w", 'u', 0, -1},
                                              {"kernel_size", 'u', 0, -1},
                                              {"kernel_h", 'u', 0, -1},
                                              {"kernel_w", 'u', 0, -1},
                                              {"stride", 'u', 0, -1},
                                              {"stride_h", 'u', 0, -1},
                                              {"stride_w", 'u', 0, -1},
                                              {"engine", 'e', 0, E_PoolingParameter_Engine},
                                              {"global_pooling", 'b', 0, -1},
                                              {"round_mode", 'e', 0, E_PoolingParameter_RoundMode}};
static const pt_field f_PowerParameter[] = {
    {"power", 'f', 0, -1}, {"scale", 'f', 0, -1}, {"shift", 'f', 0, -1}};
static const pt_field f_PythonParameter[] = {{"module", 's', 0, -1},
                                             {"layer", 's', 0, -1},
                                             {"param_str", 's', 0, -1},
                                             {"share_in_parallel", 'b', 0, -1}};
static const pt_field f_RecurrentParameter[] = {{"num_output", 'u', 0, -1},
                                                {"weight_filler", 'm', 0, M_FillerParameter},
                                                {"bias_filler", 'm', 0, M_FillerParameter},
                                                {"debug_info", 'b', 0, -1},
                                                {"expose_hidden", 'b', 0, -1}};
static const pt_field f_ReductionParameter[] = {
    {"operation", 'e', 0, E_ReductionParameter_ReductionOp},
    {"axis", 'i', 0, -1},
    {"coeff", 'f', 0, -1}};
static const pt_field f_ReLUParameter[] = {{"negative_slope", 'f', 0, -1},
                                           {"engine", 'e', 0, E_ReLUParameter_Engine}};
static const pt_field f_ReshapeParameter[] = {
    {"shape", 'm', 0, M_BlobShape}, {"axis", 'i', 0, -1}, {"num_axes", 'i', 0, -1}};
static const pt_field f_ScaleParameter[] = {{"axis", 'i', 0, -1},
                                            {"num_axes", 'i', 0, -1},
                                            {"filler", 'm', 0, M_FillerParameter},
                                            {"bias_term", 'b', 0, -1},
                                            {"bias_filler", 'm', 0, M_FillerParameter}};
static const pt_field f_SigmoidParameter[] = {{"engine", 'e', 0, E_SigmoidParameter_Engine}};
static const pt_field f_SliceParameter[] = {
    {"axis", 'i', 0, -1}, {"slice_point", 'u', 1, -1}, {"slice_dim", 'u', 0, -1}};
static const pt_field f_SoftmaxParameter[] = {{"engine", 'e', 0, E_SoftmaxParameter_Engine},
                                              {"axis", 'i', 0, -1}};
static const pt_field f_SwishParameter[] = {{"beta", 'f', 0, -1}};
static const pt_field f_TanHParameter[] = {{"engine", 'e', 0, E_TanHParameter_Engine}};
static const pt_field f_TileParameter[] = {{"axis", 'i', 0, -1}, {"tiles", 'i', 0, -1}};
static const pt_field f_ThresholdParameter[] = {{"threshold", 'f', 0, -1}};
static const pt_field f_WindowDataParameter[] = {
    {"source", 's', 0, -1},       {"scale", 'f', 0, -1},        {"mean_file", 's', 0, -1},
    {"batch_size", 'u', 0, -1},   {"crop_size", 'u', 0, -1},    {"mirror", 'b', 0, -1},
    {"fg_threshold", 'f', 0, -1}, {"bg_threshold", 'f', 0, -1}, {"fg_fraction", 'f', 0, -1},
    {"context_pad", 'u', 0, -1},  {"crop_mode", 's', 0, -1},    {"cache_images", 'b', 0, -1},
    {"root_folder", 's', 0, -1}};
static const pt_field f_SPPParameter[] = {{"pyramid_height", 'u', 0, -1},
                                          {"pool", 'e', 0, E_SPPParameter_PoolMethod},
                                          {"engine", 'e', 0, E_SPPParameter_Engine}};
static const pt_field f_V1LayerParameter[] = {
    {"bottom", 's', 1, -1},
    {"top", 's', 1, -1},
    {"name", 's', 0, -1},
    {"include", 'm', 1, M_NetStateRule},
    {"exclude", 'm', 1, M_NetStateRule},
    {"type", 'e', 0, E_V1LayerParameter_LayerType},
    {"blobs", 'm', 1, M_BlobProto},
    {"param", 's', 1, -1},
    {"blob_share_mode", 'e', 1, E_V1LayerParameter_DimCheckMode},
    {"blobs_lr", 'f', 1, -1},
    {"weight_decay", 'f', 1, -1},
    {"loss_weight", 'f', 1, -1},
    {"accuracy_param", 'm', 0, M_AccuracyParameter},
    {"argmax_param", 'm', 0, M_ArgMaxParameter},
    {"concat_param", 'm', 0, M_ConcatParameter},
    {"contrastive_loss_param", 'm', 0, M_ContrastiveLossParameter},
    {"convolution_param", 'm', 0, M_ConvolutionParameter},
    {"data_param", 'm', 0, M_DataParameter},
    {"dropout_param", 'm', 0, M_DropoutParameter},
    {"dummy_data_param", 'm', 0, M_DummyDataParameter},
    {"eltwise_param", 'm', 0, M_EltwiseParameter},
    {"exp_param", 'm', 0, M_ExpParameter},
    {"hdf5_data_param", 'm', 0, M_HDF5DataParameter},
    {"hdf5_output_param", 'm', 0, M_HDF5OutputParameter},
    {"hinge_loss_param", 'm', 0, M_HingeLossParameter},
    {"image_data_param", 'm', 0, M_ImageDataParameter},
    {"infogain_loss_param", 'm', 0, M_InfogainLossParameter},
    {"inner_product_param", 'm', 0, M_InnerProductParameter},
    {"lrn_param", 'm', 0, M_LRNParameter},
    {"memory_data_param", 'm', 0, M_MemoryDataParameter},
    {"mvn_param", 'm', 0, M_MVNParameter},
    {"pooling_param", 'm', 0, M_PoolingParameter},
    {"power_param", 'm', 0, M_PowerParameter},
    {"relu_param", 'm', 0, M_ReLUParameter},
    {"sigmoid_param", 'm', 0, M_SigmoidParameter},
    {"softmax_param", 'm', 0, M_SoftmaxParameter},
    {"slice_param", 'm', 0, M_SliceParameter},
    {"tanh_param", 'm', 0, M_TanHParameter},
    {"threshold_param", 'm', 0, M_ThresholdParameter},
    {"window_data_param", 'm', 0, M_WindowDataParameter},
    {"transform_param", 'm', 0, M_TransformationParameter},
    {"loss_param", 'm', 0, M_LossParameter},
    {"layer", 'm', 0, M_V0LayerParameter}};
static const pt_field f_V0LayerParameter[] = {{"name", 's', 0, -1},
                                              {"type", 's', 0, -1},
                                              {"num_output", 'u', 0, -1},
                                              {"biasterm", 'b', 0, -1},
                                              {"weight_filler", 'm', 0, M_FillerParameter},
                                              {"bias_filler", 'm', 0, M_FillerParameter},
                                              {"pad", 'u', 0, -1},
                                              {"kernelsize", 'u', 0, -1},
                                              {"group", 'u', 0, -1},
                                              {"stride", 'u', 0, -1},
                                              {"pool", 'e', 0, E_V0LayerParameter_PoolMethod},
                                              {"dropout_ratio", 'f', 0, -1},
                                              {"local_size", 'u', 0, -1},
                                              {"alpha", 'f', 0, -1},
                                              {"beta", 'f', 0, -1},
                                              {"k", 'f', 0, -1},
                                              {"source", 's', 0, -1},
                                              {"scale", 'f', 0, -1},
                                              {"meanfile", 's', 0, -1},
                                              {"batchsize", 'u', 0, -1},
                                              {"cropsize", 'u', 0, -1},
                                              {"mirror", 'b', 0, -1},
                                              {"blobs", 'm', 1, M_BlobProto},
                                              {"blobs_lr", 'f', 1, -1},
                                              {"weight_decay", 'f', 1, -1},
                                              {"rand_skip", 'u', 0, -1},
                                              {"det_fg_threshold", 'f', 0, -1},
                                              {"det_bg_threshold", 'f', 0, -1},
                                              {"det_fg_fraction", 'f', 0, -1},
                                              {"det_context_pad", 'u', 0, -1},
                                              {"det_crop_mode", 's', 0, -1},
                                              {"new_num", 'i', 0, -1},
                                              {"new_channels", 'i', 0, -1},
                                              {"new_height", 'i', 0, -1},
                                              {"new_width", 'i', 0, -1},
                                              {"shuffle_images", 'b', 0, -1},
                                              {"concat_dim", 'u', 0, -1},
                                              {"hdf5_output_param", 'm', 0, M_HDF5OutputParameter}};
static const pt_field f_PReLUParameter[] = {{"filler", 'm', 0, M_FillerParameter},
                                            {"channel_shared", 'b', 0, -1}};

#define MSG(m)                                                                                     \
    {                                                                                              \
        "caffe." #m, f_##m, sizeof f_##m / sizeof *f_##m                                           \
    }
static const pt_message messages[M_N] = {
    MSG(BlobShape),
    MSG(BlobProto),
    MSG(FillerParameter),
    MSG(NetParameter),
    MSG(SolverParameter),
    MSG(NetState),
    MSG(NetStateRule),
    MSG(ParamSpec),
    MSG(LayerParameter),
    MSG(TransformationParameter),
    MSG(LossParameter),
    MSG(AccuracyParameter),
    MSG(ArgMaxParameter),
    MSG(ClipParameter),
    MSG(ConcatParameter),
    MSG(BatchNormParameter),
    MSG(BiasParameter),
    MSG(ContrastiveLossParameter),
    MSG(ConvolutionParameter),
    MSG(CropParameter),
    MSG(DataParameter),
    MSG(DropoutParameter),
    MSG(DummyDataParameter),
    MSG(EltwiseParameter),
    MSG(ELUParameter),
    MSG(EmbedParameter),
    MSG(ExpParameter),
    MSG(FlattenParameter),
    MSG(HDF5DataParameter),
    MSG(HDF5OutputParameter),
    MSG(HingeLossParameter),
    MSG(ImageDataParameter),
    MSG(InfogainLossParameter),
    MSG(InnerProductParameter),
    MSG(InputParameter),
    MSG(LogParameter),
    MSG(LRNParameter),
    MSG(MemoryDataParameter),
    MSG(MVNParameter),
    MSG(ParameterParameter),
    MSG(PoolingParameter),
    MSG(PowerParameter),
    MSG(PythonParameter),
    MSG(RecurrentParameter),
    MSG(ReductionParameter),
    MSG(ReLUParameter),
    MSG(ReshapeParameter),
    MSG(ScaleParameter),
    MSG(SigmoidParameter),
    MSG(SliceParameter),
    MSG(SoftmaxParameter),
    MSG(SwishParameter),
    MSG(TanHParameter),
    MSG(TileParameter),
    MSG(ThresholdParameter),
    MSG(WindowDataParameter),
    MSG(SPPParameter),
    MSG(V1LayerParameter),
    MSG(V0LayerParameter),
    MSG(PReLUParameter),
};

typedef struct chk {
    const char *file;
    const char *layer; /* the layer being checked (messages): named in errors */
    ld_err *e;
} chk;

static int fail(const chk *c, const ld_pt_node *n, const char *fmt, const char *a, const char *b,
                const char *d)
{
    char what[400];
    snprintf(what, sizeof what, fmt, a, b, d);
    if (c->layer)
        return ld__err(c->e, LD_EFORMAT, "%s:%d:%d: layer '%.100s': %s", c->file, n->line, n->col,
                       c->layer, what);
    return ld__err(c->e, LD_EFORMAT, "%s:%d:%d: %s", c->file, n->line, n->col, what);
}

/* Edit distance, for the suggestion of a misspelt field (names of up to 63 bytes). */
static size_t distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b), row[64];
    if (na > 63 || nb > 63) return (size_t)-1;
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[nb];
}

static int unknown_field(const chk *c, const ld_pt_node *k, const pt_message *m)
{
    const char *near = NULL;
    size_t best = (size_t)-1, len = strlen(k->name);
    for (size_t i = 0; i < m->n; i++) {
        size_t d = distance(k->name, m->fields[i].name);
        if (d < best) {
            best = d;
            near = m->fields[i].name;
        }
    }
    if (near && best <= 2 && best * 3 <= len) {
        char hint[96];
        snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", near);
        return fail(c, k, "message type \"%s\" has no field named \"%.64s\"%s: Caffe refuses it",
                    m->name, k->name, hint);
    }
    return fail(c, k, "message type \"%s\" has no field named \"%.64s\"%s: Caffe refuses it",
                m->name, k->name, "");
}

/* 1: a whole number (C's forms: decimal, 0x hex, 0 octal); 0: not one; -1: out of range. */
static int full_number(const char *v, int is_unsigned)
{
    char *end = NULL;
    if (!*v || (is_unsigned && *v == '-')) return 0;
    errno = 0;
    if (is_unsigned)
        (void)strtoull(v, &end, 0);
    else
        (void)strtoll(v, &end, 0);
    if (end == v || *end) return 0;
    return errno == ERANGE ? -1 : 1;
}

static int is_float(const char *v)
{
    char *end = NULL;
    (void)strtod(v, &end);
    return end != v && (!*end || ((*end == 'f' || *end == 'F') && !end[1]));
}

/* An enum value by name, or by number (then renamed: the planner compares names). */
static int check_enum(const chk *c, ld_pt_node *k, const pt_enum *en)
{
    char list[200] = "";
    size_t used = 0;
    if (!k->is_string) {
        for (size_t i = 0; i < en->n; i++)
            if (!strcmp(k->value, en->values[i].name)) return LD_OK;
        if (full_number(k->value, 0) == 1) {
            long long v = strtoll(k->value, NULL, 0);
            for (size_t i = 0; i < en->n; i++) {
                if (en->values[i].number != v) continue;
                char *name = ld__strdup(en->values[i].name);
                if (!name) return ld__err(c->e, LD_ENOMEM, "out of memory");
                free(k->value);
                k->value = name;
                k->len = strlen(name);
                return LD_OK;
            }
        }
    }
    for (size_t i = 0; i < en->n && used + 40 < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                 en->values[i].name);
    return fail(c, k, "\"%.64s\" is not a value of %s (%s): Caffe refuses it", k->value, en->name,
                list);
}

/* One field's kind and value against its declaration. */
static int check_value(const chk *c, ld_pt_node *k, const pt_message *m, const pt_field *f)
{
    char what[160];
    if (f->kind == 'm') {
        if (!k->value) return LD_OK;
        snprintf(what, sizeof what, "of %s is a message (%s { ... }), not a value", m->name,
                 f->name);
        return fail(c, k, "field \"%s\" %s%s", f->name, what, "");
    }
    if (!k->value) {
        snprintf(what, sizeof what, "of %s takes a value (%s: ...), not a message", m->name,
                 f->name);
        return fail(c, k, "field \"%s\" %s%s", f->name, what, "");
    }
    const char *v = k->value, *want = NULL;
    switch (f->kind) {
    case 'e': return check_enum(c, k, &enums[(int)f->type]);
    case 's':
        if (!k->is_string) want = "a quoted string";
        break;
    case 'b':
        if (k->is_string || !(!strcmp(v, "true") || !strcmp(v, "false") || !strcmp(v, "True") ||
                              !strcmp(v, "False") || !strcmp(v, "t") || !strcmp(v, "f") ||
                              !strcmp(v, "1") || !strcmp(v, "0")))
            want = "true or false";
        break;
    case 'f':
        if (k->is_string || !is_float(v)) want = "a number";
        break;
    default: /* 'i', 'u' */
        if (!k->is_string && full_number(v, f->kind == 'u') < 0)
            return fail(c, k, "field \"%s\" of %s: %.60s is too large", f->name, m->name, v);
        if (k->is_string || full_number(v, f->kind == 'u') != 1)
            want = f->kind == 'u' ? "a whole number >= 0" : "a whole number";
    }
    if (!want) return LD_OK;
    snprintf(what, sizeof what, "of %s takes %s, not", m->name, want);
    return fail(c, k, "field \"%s\" %s %.60s", f->name, what, k->is_string ? "a string" : v);
}

static const pt_field *field_of(const pt_message *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->fields[i].name, name)) return &m->fields[i];
    return NULL;
}

/* A node without its kids (they have moved). */
static void free_shell(ld_pt_node *n)
{
    free(n->kids);
    free(n->name);
    free(n->value);
    free(n);
}

/* Append the kids of `from` to `to` (protobuf merges a repeated non-repeated message). */
static int move_kids(ld_pt_node *to, ld_pt_node *from, ld_err *e)
{
    if (to->nkids + from->nkids > to->cap) {
        size_t cap = to->cap ? to->cap : 8;
        while (cap < to->nkids + from->nkids)
            cap *= 2;
        ld_pt_node **t = realloc(to->kids, cap * sizeof *t);
        if (!t) return ld__err(e, LD_ENOMEM, "out of memory");
        to->kids = t;
        to->cap = cap;
    }
    memcpy(to->kids + to->nkids, from->kids, from->nkids * sizeof *from->kids);
    to->nkids += from->nkids;
    from->nkids = 0;
    return LD_OK;
}

static int check_message(chk *c, ld_pt_node *m, int type)
{
    const pt_message *pm = &messages[type];
    int rc = LD_OK;
    /* Each field's declaration (an index into pm->fields), checked in the text's order. */
    int *fi = malloc((m->nkids + 1) * sizeof *fi);
    /* Per declared field: the first message of a non-repeated message field, and whether a
     * later value of a non-repeated scalar was seen (walking backwards). */
    ld_pt_node **first = calloc(pm->n + 1, sizeof *first);
    char *seen = calloc(pm->n + 1, 1);
    const char *outer = c->layer;
    if (!fi || !first || !seen) {
        rc = ld__err(c->e, LD_ENOMEM, "out of memory");
        goto done;
    }
    if (type == M_LayerParameter || type == M_V1LayerParameter || type == M_V0LayerParameter) {
        c->layer = "(unnamed)"; /* errors in a layer name it: its last name, as Caffe keeps */
        for (size_t i = 0; i < m->nkids; i++)
            if (!strcmp(m->kids[i]->name, "name") && m->kids[i]->value)
                c->layer = m->kids[i]->value;
    }
    for (size_t i = 0; i < m->nkids; i++) {
        ld_pt_node *k = m->kids[i];
        const pt_field *f = field_of(pm, k->name);
        if (!f) {
            rc = unknown_field(c, k, pm);
            goto done;
        }
        if ((rc = check_value(c, k, pm, f)) != LD_OK) goto done;
        fi[i] = (int)(f - pm->fields);
    }
    /* What Caffe keeps: the last of a non-repeated scalar, one merged non-repeated message. */
    size_t o = 0;
    for (size_t i = m->nkids; i-- > 0;) {
        const pt_field *f = &pm->fields[fi[i]];
        if (!f->repeated && f->kind != 'm') {
            if (seen[fi[i]]) {
                ld__pt_free(m->kids[i]);
                m->kids[i] = NULL;
            }
            seen[fi[i]] = 1;
        }
    }
    for (size_t i = 0; i < m->nkids; i++) {
        ld_pt_node *k = m->kids[i];
        if (!k) continue;
        const pt_field *f = &pm->fields[fi[i]];
        if (!f->repeated && f->kind == 'm') {
            if (first[fi[i]]) {
                if ((rc = move_kids(first[fi[i]], k, c->e)) != LD_OK) {
                    for (size_t j = i; j < m->nkids; j++) /* keep the tree whole to free */
                        if (m->kids[j]) m->kids[o++] = m->kids[j];
                    m->nkids = o;
                    goto done;
                }
                free_shell(k);
                continue;
            }
            first[fi[i]] = k;
        }
        m->kids[o] = k;
        fi[o++] = fi[i];
    }
    m->nkids = o;
    /* Then the messages inside. */
    for (size_t i = 0; i < m->nkids && rc == LD_OK; i++)
        if (pm->fields[fi[i]].kind == 'm')
            rc = check_message(c, m->kids[i], pm->fields[fi[i]].type);
done:
    c->layer = outer;
    free(fi);
    free(first);
    free(seen);
    return rc;
}

int ld__plan_schema_check(ld_pt_node *root, int which, const char *file, ld_err *e)
{
    chk c = {file, NULL, e};
    return check_message(&c, root,
                         which == LD_PLAN_SOLVER_PROTO ? M_SolverParameter : M_NetParameter);
}
