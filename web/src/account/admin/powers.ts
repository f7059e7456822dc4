// What the signed-in admin may do to a user, by the server's rules (src/account/user-admin/): the actions a
// page offers are exactly these, so it never offers one the server refuses.
export const ROLE = { user: 1, admin: 10, root: 100 } as const;

export interface Who {
  id: number;
  role: number;
}

export function powersOver(me: Who, u: Who & { status: number }) {
  // The reference's rank rule: root acts on anyone, others on lower roles only.
  const outranks = me.role >= ROLE.root || me.role > u.role;
  const other = outranks && me.id !== u.id;
  return {
    /** AS07 and the per-user tools (A18–A22), the balance (AS17): root also on themselves. */
    view: outranks,
    balance: outranks,
    disable: other && u.status === 1 && u.role < ROLE.root,
    enable: other && u.status !== 1,
    promote: other && me.role >= ROLE.root && u.role < ROLE.admin,
    demote: other && u.role >= ROLE.admin && u.role < ROLE.root,
    remove: other && u.role < ROLE.root,
    /** AS19 and AS20. */
    password: other,
    group: other,
  };
}

export type Powers = ReturnType<typeof powersOver>;
