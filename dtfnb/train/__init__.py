"""tf.train: optimizers, the global step (and, from other modules, distributed training)."""

from dtfnb.distributed_runtime.cluster import ClusterSpec
from dtfnb.distributed_runtime.server_lib import Server
from dtfnb.protos.example_pb2 import (  # the records of TFRecord files
    BytesList,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
)
from dtfnb.summary.event_file import summary_iterator
from dtfnb.train.adadelta import AdadeltaOptimizer
from dtfnb.train.adagrad import AdagradOptimizer
from dtfnb.train.adam import AdamOptimizer
from dtfnb.train.basic_session_run_hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    SecondOrStepTimer,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
)
from dtfnb.train.checkpoint_management import (
    CheckpointState,
    checkpoint_exists,
    get_checkpoint_mtimes,
    get_checkpoint_state,
    latest_checkpoint,
    remove_checkpoint,
    update_checkpoint_state,
)
from dtfnb.train.coordinator import Coordinator, LooperThread
from dtfnb.train.device_setter import (
    GreedyLoadBalancingStrategy,
    byte_size_load_fn,
    replica_device_setter,
)
from dtfnb.train.gradient_descent import GradientDescentOptimizer
from dtfnb.train.input import (
    batch,
    batch_join,
    input_producer,
    limit_epochs,
    match_filenames_once,
    maybe_batch,
    maybe_batch_join,
    maybe_shuffle_batch,
    maybe_shuffle_batch_join,
    range_input_producer,
    shuffle_batch,
    shuffle_batch_join,
    slice_input_producer,
    string_input_producer,
)
from dtfnb.train.learning_rate_decay import (
    cosine_decay,
    cosine_decay_restarts,
    exponential_decay,
    inverse_time_decay,
    linear_cosine_decay,
    natural_exp_decay,
    noisy_linear_cosine_decay,
    piecewise_constant,
    polynomial_decay,
)
from dtfnb.train.momentum import MomentumOptimizer
from dtfnb.train.monitored_session import (
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    Scaffold,
    SessionCreator,
    SingularMonitoredSession,
    WorkerSessionCreator,
)
from dtfnb.train.moving_averages import ExponentialMovingAverage
from dtfnb.train.optimizer import Optimizer
from dtfnb.train.proximal import ProximalAdagradOptimizer, ProximalGradientDescentOptimizer
from dtfnb.train.queue_runner import QueueRunner, add_queue_runner, start_queue_runners
from dtfnb.train.rmsprop import RMSPropOptimizer
from dtfnb.train.saver import Saver, export_meta_graph, import_meta_graph
from dtfnb.train.session_manager import SessionManager
from dtfnb.train.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from dtfnb.train.supervisor import Supervisor
from dtfnb.train.sync_replicas_optimizer import SyncReplicasOptimizer
from dtfnb.train.training_util import (
    assert_global_step,
    create_global_step,
    get_global_step,
    get_or_create_global_step,
    global_step,
)
