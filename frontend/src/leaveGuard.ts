// Work that leaving the page would lose: the editor registers a check, and every way out
// (an in-app link, the back button, closing or reloading the tab) asks first.

type Check = () => string | null;
let check: Check | null = null;

/** Registers what to ask before leaving (a message while there is unsaved work), or clears it. */
export function setLeaveGuard(next: Check | null): void {
  check = next;
}

/** True when nothing would be lost, or the user agreed to lose it. */
export function mayLeave(): boolean {
  const message = check?.();
  return !message || window.confirm(message);
}

/** The message the browser's own "leave site?" prompt stands for, if any. */
export function pendingLoss(): string | null {
  return check?.() ?? null;
}
