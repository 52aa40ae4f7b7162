#!/usr/bin/env bash
# dataconv plan vs real Caffe 1.0 (issue 17): for every run in tests/data/plan/measured.tsv
# (four nets x Data / HDF5Data / LibData x 3 batch sizes, measured with /usr/bin/time -v by
# scripts/plan_measure.sh), the predicted peak host memory is within +-10 % of Caffe's peak
# RSS; `--shapes` matches the top shapes Caffe logged (tests/data/plan/shapes). The datasets
# are rebuilt here with the same names, counts, sizes and --split settings from the fixture
# photos (tests/cli/lib/plan_measured.py). Needs no Caffe. Makes ~400 MB of datasets.
source "$(dirname "$0")/lib/common.sh"
if asan_build; then
    echo "skipped: an ASan build (the datasets and ~60 plans take minutes under ASan; test_plan covers it)"
    exit 77
fi
check "predicted vs measured peak RSS, and shapes vs Caffe's log"
"$PYTHON" "$SRC/tests/cli/lib/plan_measured.py" "$SRC" "$TMP" "$DATACONV" "$LD_TEST_DATA/photos" \
    --table "$TMP/predicted.tsv" || fail "dataconv plan is off Caffe's measurements (above)"
echo "ok"
