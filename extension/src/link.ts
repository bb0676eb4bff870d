import { Kernel, KernelMessage } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { asSnapshot, COMM_TARGET, ISnapshot } from './protocol';

/**
 * What the panel knows about a kernel: "connecting" while a hello is
 * unanswered, "attached" once a comm carries snapshots, "absent" when the
 * kernel has no dtfnb loaded (the panel then waits for the kernel to open one).
 */
export type LinkState = 'connecting' | 'attached' | 'absent';

/**
 * The comm to one kernel. It registers the `dtfnb.panel` target (so a kernel
 * that loads dtfnb can attach on its own), says hello, keeps the latest
 * snapshot, and starts over when the kernel restarts.
 */
export class KernelLink {
  constructor(readonly kernel: Kernel.IKernelConnection) {
    kernel.registerCommTarget(COMM_TARGET, this._onCommOpen);
    kernel.statusChanged.connect(this._onStatus, this);
    this._hello();
  }

  get state(): LinkState {
    return this._state;
  }

  get snapshot(): ISnapshot | null {
    return this._snapshot;
  }

  /** Fires whenever the state or the snapshot changes. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Asks the kernel for a snapshot now. */
  refresh(): void {
    if (this._comm && !this._comm.isDisposed) {
      this._comm.send({ type: 'refresh' });
    } else {
      this._hello();
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this.kernel.statusChanged.disconnect(this._onStatus, this);
    if (!this.kernel.isDisposed) {
      this.kernel.removeCommTarget(COMM_TARGET, this._onCommOpen);
    }
    this._closeComm();
    Signal.clearData(this);
  }

  private _onCommOpen = (comm: Kernel.IComm, msg: KernelMessage.ICommOpenMsg): void => {
    if (this._comm && !this._comm.isDisposed) {
      // Our hello crossed the kernel's comm_open (Restart and Run All does this). Keep ours
      // and let the kernel close its new one, which it knows (it may not have seen our hello
      // yet): a comm_close from here goes to the comm's subshell, which JupyterLab deletes
      // at once, and ipykernel drops the message with "Task was destroyed but it is
      // pending!" in the running cell.
      comm.send({ type: 'close' });
      return;
    }
    this._adopt(comm, msg.content.data);
  };

  private _hello(): void {
    if (this._disposed || this.kernel.isDisposed) {
      return;
    }
    this._set('connecting', null);
    try {
      const comm = this.kernel.createComm(COMM_TARGET);
      this._adopt(comm, null);
      comm.open({ type: 'hello' });
    } catch (error) {
      console.warn('dtfnb: could not open the panel comm', error);
      this._set('absent', null);
    }
  }

  /** Makes `comm` the one this link listens to; the kernel opens one on `%load_ext dtfnb`. */
  private _adopt(comm: Kernel.IComm, data: unknown): void {
    this._comm = comm;
    comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => {
      const snapshot = asSnapshot(msg.content.data);
      if (snapshot && comm === this._comm) {
        this._set('attached', snapshot);
      }
    };
    comm.onClose = () => {
      if (comm === this._comm) {
        this._comm = null;
        this._set('absent', null);
      }
    };
    const snapshot = asSnapshot(data);
    if (snapshot) {
      this._set('attached', snapshot);
    }
    if (data !== null) {
      // Opened by the kernel: it sends changes only on a comm a panel has spoken on.
      comm.send({ type: 'refresh' });
    }
  }

  private _closeComm(): void {
    const comm = this._comm;
    this._comm = null;
    if (comm && !comm.isDisposed) {
      comm.close();
    }
  }

  private _onStatus(_: Kernel.IKernelConnection, status: Kernel.Status): void {
    if (status === 'restarting' || status === 'autorestarting') {
      // The kernel's comms die with it; nothing shown is true any more.
      this._comm = null;
      this._restarting = true;
      this._set('absent', null);
    } else if (status === 'dead') {
      this._comm = null;
      this._set('absent', null);
    } else if (status === 'idle' && this._restarting) {
      this._restarting = false;
      this._hello();
    }
  }

  private _set(state: LinkState, snapshot: ISnapshot | null): void {
    this._state = state;
    this._snapshot = snapshot;
    this._changed.emit();
  }

  private _comm: Kernel.IComm | null = null;
  private _state: LinkState = 'connecting';
  private _snapshot: ISnapshot | null = null;
  private _restarting = false;
  private _disposed = false;
  private _changed = new Signal<this, void>(this);
}
