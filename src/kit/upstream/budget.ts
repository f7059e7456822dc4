/**
 * Bytes of upstream answers held in memory at once, over every concurrent request of the clients that share
 * it: a request reserves each chunk of its body as it arrives and releases the lot when its body is read or
 * fails. A chunk that would take the total past the limit is refused, and that request fails instead of the
 * process growing without bound.
 */
export class ByteBudget {
  private held = 0;
  private highest = 0;
  /** Requests refused because the budget was spent. */
  refused = 0;

  constructor(readonly limit: number) {}

  /** Takes `bytes` from the budget; false (nothing taken) when that would exceed the limit. */
  reserve(bytes: number): boolean {
    if (this.held + bytes > this.limit) {
      this.refused++;
      return false;
    }
    this.held += bytes;
    if (this.held > this.highest) this.highest = this.held;
    return true;
  }

  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }

  /** Bytes held now. */
  get used(): number {
    return this.held;
  }

  /** The most ever held at once. */
  get peak(): number {
    return this.highest;
  }
}
