"""Device strings: parsing, piecewise merging and canonical form, as TensorFlow does."""


class DeviceSpec:
    """A possibly partial device: job, replica, task, device type and index.

    `"/job:ps/task:1/cpu:0"` parses to job="ps", task=1, device_type="CPU",
    device_index=0; `to_string()` gives `/job:ps/task:1/device:CPU:0`. Fields
    left as None are unconstrained; a device_index of None prints as `*`.
    """

    __slots__ = ("job", "replica", "task", "device_type", "device_index")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self.job = job
        self.replica = None if replica is None else int(replica)
        self.task = None if task is None else int(task)
        self.device_type = _canonical_type(device_type)
        self.device_index = None if device_index is None else int(device_index)

    @classmethod
    def from_string(cls, spec):
        """Parses a device string such as "/job:ps/task:0/device:CPU:0"; missing fields stay None.
        """
        return _parse(spec or "")

    def to_string(self):
        """The device string of the fields that are set, in TensorFlow's order."""
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            parts.append(f"/device:{self.device_type}:{index}")
        return "".join(parts)

    def merge_from(self, other):
        """Fields set in `other` override this spec's (the inner device block wins)."""
        merged = self.copy()
        for field in self.__slots__:
            value = getattr(other, field)
            if value is not None:
                setattr(merged, field, value)
        return merged

    def copy(self):
        """A new DeviceSpec with the same fields."""
        return DeviceSpec(self.job, self.replica, self.task, self.device_type, self.device_index)

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return f"DeviceSpec({self.to_string()!r})"


def _canonical_type(device_type):
    if device_type is None:
        return None
    upper = device_type.upper()
    return upper if upper in ("CPU", "GPU") else device_type


def _parse(spec):
    job = replica = task = device_type = device_index = None
    for part in spec.split("/"):
        if not part:
            continue
        fields = part.split(":")
        key = fields[0].lower()
        try:
            if key == "job" and len(fields) == 2 and fields[1]:
                job = fields[1]
            elif key == "replica" and len(fields) == 2:
                replica = int(fields[1])
            elif key == "task" and len(fields) == 2:
                task = int(fields[1])
            elif key == "device" and len(fields) in (2, 3):
                device_type = fields[1]
                if len(fields) == 3 and fields[2] != "*":
                    device_index = int(fields[2])
            elif key in ("cpu", "gpu") and len(fields) <= 2:
                device_type = key
                if len(fields) == 2 and fields[1] != "*":
                    device_index = int(fields[1])
            elif len(fields) == 2 and fields[0].isupper() and fields[0].isalpha():
                device_type = fields[0]
                if fields[1] != "*":
                    device_index = int(fields[1])
            else:
                raise ValueError
        except ValueError:
            raise ValueError(f"Unknown attribute: '{part}' in '{spec}'") from None
        if (replica is not None and replica < 0) or (task is not None and task < 0) or (
                device_index is not None and device_index < 0):
            raise ValueError(f"Unknown attribute: '{part}' in '{spec}'")
    return DeviceSpec(job, replica, task, device_type, device_index)


def canonical_name(spec):
    """The string TensorFlow stores on an op for a device block: `/cpu:0` → `/device:CPU:0`."""
    return DeviceSpec.from_string(spec).to_string()


def merge(outer, inner):
    """Merges two device strings piecewise, the inner one winning."""
    return DeviceSpec.from_string(outer).merge_from(DeviceSpec.from_string(inner)).to_string()
