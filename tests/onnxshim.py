"""Import onnx under Debian's numpy 1.24: onnx 1.12 still uses the removed np.float etc."""
import numpy as np

for _name, _type in [("float", float), ("int", int), ("bool", bool), ("object", object),
                     ("str", str), ("complex", complex)]:
    if not hasattr(np, _name) or getattr(np, _name) is not _type:
        setattr(np, _name, _type)

import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402,F401
