"""Type stubs of jitc.dask (see the module's docstring: help(jitc.dask))."""
from typing import Any, Dict, Optional, Union

__all__: list

# A Dask array, a NumPy or CuPy array, or a scalar (Python, NumPy, 0-d).
Value = Any
# A Dask array (0-d for a reduction), or a dict of them by name; None when
# nothing is assigned.
Result = Union[None, Any, Dict[str, Any]]

def evaluate(program: str, target: Optional[str] = None, **names: Value) -> Result: ...
