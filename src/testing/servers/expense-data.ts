/**
 * @module
 * Deterministic (seeded) data of a company's expenses: team members with levels, thousands of
 * expense line items across categories and quarters, and budgets by level, category and
 * quarter. The same seed always gives the same data, so tests and benchmarks can compute
 * expected answers from it.
 */
import { seededRandom } from '../../util/seeded-random.js';

/** Seniority levels, lowest first. */
export const LEVELS = ['L1', 'L2', 'L3', 'L4', 'L5'] as const;
/** A seniority level. */
export type Level = (typeof LEVELS)[number];
/** Expense categories. */
export const CATEGORIES = ['travel', 'lodging', 'meals', 'software', 'equipment', 'training'] as const;
/** An expense category. */
export type Category = (typeof CATEGORIES)[number];
/** Quarters of the fiscal year. */
export const QUARTERS = ['Q1', 'Q2', 'Q3', 'Q4'] as const;
/** A quarter. */
export type Quarter = (typeof QUARTERS)[number];

/** One team member. */
export interface TeamMember {
  id: string;
  name: string;
  email: string;
  level: Level;
  department: string;
  role: string;
  location: string;
  managerId: string | null;
}

/** One expense line item. */
export interface ExpenseItem {
  id: string;
  memberId: string;
  date: string;
  quarter: Quarter;
  category: Category;
  amount: number;
  currency: 'USD';
  merchant: string;
  description: string;
  status: 'approved' | 'pending' | 'rejected';
}

/** Budget of one level for one quarter, by category (USD). */
export interface LevelBudget {
  level: Level;
  quarter: Quarter;
  year: number;
  budgets: Record<Category, number>;
}

/** Everything the expense server serves. */
export interface ExpenseData {
  year: number;
  members: TeamMember[];
  expenses: ExpenseItem[];
  budgets: LevelBudget[];
}

/** Options of {@link createExpenseData}. */
export interface ExpenseDataOptions {
  /** @defaultValue 42 */
  seed?: number;
  /** @defaultValue 20 */
  members?: number;
  /** Line items per member per quarter. @defaultValue 30 (2,400 items for 20 members) */
  itemsPerQuarter?: number;
}

const FIRST = [
  'Ada',
  'Ben',
  'Chen',
  'Dara',
  'Elif',
  'Farid',
  'Grace',
  'Hiro',
  'Ines',
  'Jonas',
  'Kemi',
  'Lena',
  'Mateo',
  'Noor',
  'Omar',
  'Priya',
  'Quinn',
  'Rosa',
  'Sven',
  'Tara',
  'Umar',
  'Vera',
  'Wei',
  'Yara',
];
const LAST = [
  'Okafor',
  'Lindqvist',
  'Tanaka',
  'Moreau',
  'Schmidt',
  'Haddad',
  'Novak',
  'Silva',
  'Kowalski',
  'Reyes',
  'Nakamura',
  'Fischer',
  'Ibrahim',
  'Costa',
  'Larsen',
  'Mehta',
  'Walsh',
  'Petrov',
  'Dubois',
  'Kim',
];
const DEPARTMENTS = ['Engineering', 'Sales', 'Marketing', 'Operations'];
const ROLES: Record<Level, string> = {
  L1: 'Associate',
  L2: 'Specialist',
  L3: 'Senior Specialist',
  L4: 'Lead',
  L5: 'Director',
};
const LOCATIONS = ['Berlin', 'Lisbon', 'New York', 'Singapore', 'Toronto'];
const MERCHANTS: Record<Category, string[]> = {
  travel: ['Lufthansa', 'Delta', 'Deutsche Bahn', 'Uber', 'Singapore Airlines', 'Eurostar'],
  lodging: ['Marriott', 'Hilton', 'Airbnb', 'Ibis', 'Hyatt'],
  meals: ['Pret', 'Local Bistro', 'Sushi Bar', 'Cafe Central', 'Team Dinner Co'],
  software: ['GitHub', 'Figma', 'JetBrains', 'Notion', 'Slack'],
  equipment: ['Apple', 'Dell', 'Logitech', 'IKEA Business', 'Anker'],
  training: ['Coursera', 'O’Reilly', 'Conference Pass', 'Udemy', 'Workshop Ltd'],
};
/** Typical amount (USD) of one item, by category. */
const TYPICAL: Record<Category, number> = {
  travel: 210,
  lodging: 160,
  meals: 38,
  software: 45,
  equipment: 120,
  training: 150,
};
/** Share of items per category (sums to 1). */
const SHARE: Record<Category, number> = {
  travel: 0.24,
  lodging: 0.14,
  meals: 0.34,
  software: 0.12,
  equipment: 0.08,
  training: 0.08,
};
/** Quarterly budget per category at L1, and the multiplier per level step. */
const BASE_BUDGET: Record<Category, number> = {
  travel: 1_700,
  lodging: 800,
  meals: 300,
  software: 400,
  equipment: 600,
  training: 500,
};
const LEVEL_FACTOR: Record<Level, number> = { L1: 1, L2: 1.25, L3: 1.5, L4: 2, L5: 2.5 };

const cache = new Map<string, ExpenseData>();

/**
 * The expense data set for `seed` (cached per options).
 *
 * @example
 * ```ts
 * const data = createExpenseData();
 * data.expenses.length; // 2400
 * ```
 */
export function createExpenseData(options: ExpenseDataOptions = {}): ExpenseData {
  const seed = options.seed ?? 42;
  const memberCount = options.members ?? 20;
  const perQuarter = options.itemsPerQuarter ?? 30;
  const key = `${seed}:${memberCount}:${perQuarter}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const year = 2025;

  const members: TeamMember[] = [];
  for (let i = 0; i < memberCount; i++) {
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[(i * 7 + 3) % LAST.length]!;
    const level = LEVELS[Math.min(LEVELS.length - 1, Math.floor(random() * random() * LEVELS.length * 1.6))]!;
    members.push({
      id: `emp-${String(i + 1).padStart(3, '0')}`,
      name: `${first} ${last}`,
      email: `${first.toLowerCase()}.${last.toLowerCase()}@example.com`,
      level,
      department: DEPARTMENTS[i % DEPARTMENTS.length]!,
      role: ROLES[level],
      location: pick(LOCATIONS),
      managerId: null,
    });
  }
  for (const member of members) {
    const boss = members.find(
      (m) => m.department === member.department && m !== member && m.level > member.level,
    );
    member.managerId = boss ? boss.id : null;
  }

  const cumulative = CATEGORIES.map((_, i) =>
    CATEGORIES.slice(0, i + 1).reduce((sum, c) => sum + SHARE[c], 0),
  );
  const expenses: ExpenseItem[] = [];
  let next = 1;
  for (const member of members) {
    // Some people travel a lot more than others: that is who ends up over budget.
    const travelAppetite = 0.5 + random() * 1.3;
    for (const [q, quarter] of QUARTERS.entries()) {
      for (let k = 0; k < perQuarter; k++) {
        const roll = random();
        const category = CATEGORIES[cumulative.findIndex((edge) => roll <= edge)] ?? 'meals';
        const appetite = category === 'travel' || category === 'lodging' ? travelAppetite : 1;
        const amount = Math.round(TYPICAL[category] * appetite * (0.4 + random() * 1.2) * 100) / 100;
        const month = q * 3 + 1 + Math.floor(random() * 3);
        const day = 1 + Math.floor(random() * 28);
        const statusRoll = random();
        const merchant = pick(MERCHANTS[category]);
        expenses.push({
          id: `exp-${String(next++).padStart(5, '0')}`,
          memberId: member.id,
          date: `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`,
          quarter,
          category,
          amount,
          currency: 'USD',
          merchant,
          description: `${category} — ${merchant}`,
          status: statusRoll < 0.85 ? 'approved' : statusRoll < 0.95 ? 'pending' : 'rejected',
        });
      }
    }
  }

  const budgets: LevelBudget[] = [];
  for (const level of LEVELS) {
    for (const quarter of QUARTERS) {
      const budget = {} as Record<Category, number>;
      for (const category of CATEGORIES)
        budget[category] = Math.round(BASE_BUDGET[category] * LEVEL_FACTOR[level]);
      budgets.push({ level, quarter, year, budgets: budget });
    }
  }
  const data: ExpenseData = { year, members, expenses, budgets };
  cache.set(key, data);
  return data;
}

/** Members whose approved+pending spending in `category` during `quarter` exceeds their level's budget. */
export function overBudgetMembers(
  data: ExpenseData,
  quarter: Quarter,
  category: Category,
): { member: TeamMember; spent: number; budget: number }[] {
  const out: { member: TeamMember; spent: number; budget: number }[] = [];
  for (const member of data.members) {
    const spent = data.expenses
      .filter(
        (e) =>
          e.memberId === member.id &&
          e.quarter === quarter &&
          e.category === category &&
          e.status !== 'rejected',
      )
      .reduce((sum, e) => sum + e.amount, 0);
    const budget = data.budgets.find((b) => b.level === member.level && b.quarter === quarter)!.budgets[
      category
    ];
    if (spent > budget) out.push({ member, spent: Math.round(spent * 100) / 100, budget });
  }
  return out;
}
