#!/usr/bin/env bash
# Every GPU figure of the README in one run, for a lent CUDA machine without network access:
#   bash benchmarks/gpu_figures.sh [encoder|scoring|ray ...]   (default: all three)
# Python packages the machine lacks travel as wheels in .whl/ (pip download for cp312, see
# docs/GPU.md); Ray, whose wheel is larger than what travels, as a stripped .tar.xz.
set -uo pipefail
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 RAY_AUTH_MODE=disabled TOKENIZERS_PARALLELISM=false
parts=("${@:-encoder scoring ray}")
parts=(${parts[*]})
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  if [ -f .whl/ray-stripped.tar.xz ]; then tar -xJf .whl/ray-stripped.tar.xz -C /tmp/site; fi
  python3 -m pip install -q --no-deps --no-build-isolation --no-compile --target /tmp/ab . || exit 1
  export PYTHONPATH=/tmp/ab:/tmp/site
fi
python3 -c "import torch, transformers, audiobench.machine as m; print('torch', torch.__version__, \
'transformers', transformers.__version__, '| CPU:', m.cpu_description())"
for part in "${parts[@]}"; do
  echo "=== $part"
  case $part in
    encoder)
      timeout 170 python3 benchmarks/encoder_throughput.py --size large --device cuda \
        --clips 256 --naive-clips 32 --batch-size 32 --dtypes float16 bfloat16 --profile 2>&1 \
        | grep -v -E "Warning|warn|it/s\]|^\s*$" ;;
    scoring)
      timeout 100 python3 benchmarks/scoring_devices.py --device cuda --case 3000:10 2>&1
      timeout 120 python3 benchmarks/scoring_devices.py --device cuda --skip-cpu \
        --case 17041:10 --case 17041:1366 2>&1 ;;
    ray)
      # From another folder: Ray's workers put the driver's folder on their path, where the
      # checkout's audiobench/ (without its tasks/ and models/ mapping) would shadow the install.
      (cd /tmp && timeout 110 python3 "$OLDPWD/benchmarks/ray_throughput.py" --device cuda \
        --size large --clips 256 --batch-size 32 --actors 1 2>&1 | grep -v -E "Warning|warn|it/s\]") ;;
  esac
done
