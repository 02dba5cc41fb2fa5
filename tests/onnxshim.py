"""Import onnx under Debian's numpy 1.24: onnx 1.12 still uses the removed np.float etc."""
import warnings

import numpy as np

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for _name, _type in [("float", float), ("int", int), ("bool", bool), ("object", object),
                         ("str", str), ("complex", complex)]:
        setattr(np, _name, _type)

import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402,F401
